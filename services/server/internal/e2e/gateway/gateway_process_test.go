package gateway

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	gosync "sync"
	"syscall"
	"testing"
	"time"

	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/logging"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	"bothy.example.com/server/internal/wire"
)

// gatewayProcessEnv, when set, turns the test binary into the gateway process of
// TestGatewayTwoProcesses; its value is the database URL.
const gatewayProcessEnv = "WIRE_TEST_GATEWAY_PROCESS_URL"

// gatewayProcessClock is the time of the gateway process's fake clock (the tokens of the
// test were issued at wiretest.Epoch and expire identity.token_ttl later), in RFC 3339.
const gatewayProcessClock = "WIRE_TEST_GATEWAY_PROCESS_CLOCK"

// runGatewayProcess is the second server: bothy serve --roles gateway over the database at
// url, on 127.0.0.1 and a free port it prints as its first line, until SIGTERM.
func runGatewayProcess(url string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	cfg, err := config.Load("", []string{config.DatabaseURL.EnvName() + "=" + url})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway process:", err)
		return 2
	}
	at, err := time.Parse(time.RFC3339Nano, os.Getenv(gatewayProcessClock))
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway process:", err)
		return 2
	}
	logger := logging.New(os.Stderr, slog.LevelInfo)
	app, err := wire.New(ctx, cfg, logger, wire.Options{Roles: []string{wire.RoleGateway}, Clock: clock.NewFake(at)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway process:", err)
		return 2
	}
	defer app.Close()
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway process:", err)
		return 2
	}
	fmt.Println(ln.Addr().String())
	if err := app.ServeListener(ctx, ln); err != nil {
		fmt.Fprintln(os.Stderr, "gateway process:", err)
		return 1
	}
	return 0
}

// syncBuffer is a bytes.Buffer safe for the writes of a child process's stderr copier.
type syncBuffer struct {
	mu  gosync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestGatewayTwoProcesses runs a second server process (this test binary again, with the
// gateway role only) over the test's database: events written through the test's App (the
// api role) reach a WebSocket of the other process live, through that process's own log
// tail. SIGTERM then closes the connection with 1001 (after the frames in flight) and the
// process exits cleanly; the client resumes on the first process from its cursor without
// loss. A token revoked through the first process closes its connection on the second.
func TestGatewayTwoProcesses(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$") //nolint:gosec // G204: re-runs this test binary
	cmd.Env = append(os.Environ(),
		gatewayProcessEnv+"="+w.Env.DatabaseURL,
		gatewayProcessClock+"="+w.Env.Clock.Now().Format(time.RFC3339Nano))
	var stderr syncBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("stdout: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the gateway process: %v", err)
	}
	exited := false
	t.Cleanup(func() {
		if !exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("gateway process stderr:\n%s", stderr.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the gateway process printed no address: %v", err)
	}
	base := "http://" + strings.TrimSpace(line)

	c := e2etest.MustDial(t, base, w.Sam.Token)
	c.Send(`{"op":"hello"}`)
	start := w.Head(t)
	c.Expect("ready")
	for i := range 3 {
		w.Post(t, w.Alex, w.TicketThread, fmt.Sprintf("Written through the other process %d", i))
	}
	// Sam reads through the last event he may see: Alex's own read states follow his
	// messages for Alex alone.
	want := w.RestEvents(t, w.Sam, start, w.Head(t))
	if len(want) < 3 {
		t.Fatalf("listEvents gives Sam %v, want at least the 3 messages", want)
	}
	got, _ := c.Until(want[len(want)-1], false)
	if !slices.Equal(e2etest.GatewaySeqs(got), want) {
		t.Errorf("the gateway process delivered %v live, listEvents gives %v", e2etest.GatewaySeqs(got), want)
	}

	// A token revoked through this process closes its connection on the other one, whose log
	// tail reads token.revoked (ADR 0020).
	phone, phoneID := w.Issue(t, w.Sam, "Sam's phone")
	pc := e2etest.MustDial(t, base, phone.Token)
	pc.Send(`{"op":"hello"}`)
	pc.Expect("ready")
	revoked := time.Now()
	w.Must(t, w.Sam, http.MethodPost, "/api/v1/tokens/"+phoneID.String()+"/revoke", "", http.StatusOK, nil)
	pc.EndsWith("token_revoked", revoked, e2etest.RevocationDelay+e2etest.CloseSlack)

	w.Post(t, w.Alex, w.CampaignThread, "Just before SIGTERM")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	code, more := c.Closed()
	if code != gateway.CloseGoingAway {
		t.Errorf("close %d after SIGTERM, want %d", code, gateway.CloseGoingAway)
	}
	err = cmd.Wait()
	exited = true
	if err != nil {
		t.Errorf("the gateway process ended with %v, want a clean exit", err)
	}

	got = append(got, more...)
	e2etest.RunTail(t, w.Env.App.Tail())
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), e2etest.WaitTimeout)
		defer scancel()
		_ = w.Env.App.Gateway().Shutdown(sctx)
	})
	again := e2etest.MustDial(t, w.Env.Server.URL, w.Sam.Token)
	again.Send(fmt.Sprintf(`{"op":"resume","after":%d}`, e2etest.GatewaySeqs(got)[len(got)-1]))
	rest, _ := again.Until(w.Head(t), true)
	all := append(e2etest.GatewaySeqs(got), e2etest.GatewaySeqs(rest)...)
	if rest := w.RestEvents(t, w.Sam, start, w.Head(t)); !slices.Equal(all, rest) {
		t.Errorf("across the processes Sam got %v, listEvents gives %v", all, rest)
	}
}
