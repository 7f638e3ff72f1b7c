package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The end-to-end tests run the real thing: bothy serve built from services/server on an
// embedded PostgreSQL (as make run does), the demo world (as make demo builds it), and this
// agent built and started as a process, so that it can be killed like any process.

const (
	// buildWithin bounds go build; serveWithin the first start (it creates the cluster).
	buildWithin = 5 * time.Minute
	serveWithin = 90 * time.Second
	// waitWithin bounds every wait for the agent's work; the tests wait for the work itself,
	// never for a time.
	waitWithin = 60 * time.Second
)

var built struct {
	once        sync.Once
	dir         string
	bothy, echo string
	err         error
}

// binaries builds bothy and the echo agent once for every test of the package.
func binaries(t *testing.T) (bothy, echo string) {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "echo-e2e-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		built.bothy, built.echo = filepath.Join(dir, "bothy"), filepath.Join(dir, "echo-agent")
		ctx, cancel := context.WithTimeout(context.Background(), buildWithin)
		defer cancel()
		for pkg, out := range map[string]string{"bothy.example.com/server/cmd/bothy": built.bothy, ".": built.echo} {
			cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg) //nolint:gosec // the go command, fixed arguments.
			if b, err := cmd.CombinedOutput(); err != nil {
				built.err = fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
				return
			}
		}
	})
	if built.err != nil {
		t.Fatalf("build: %v", built.err)
	}
	return built.bothy, built.echo
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// proc is a started process with its stderr collected.
type proc struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr bytes.Buffer
	lines  chan string
	exited chan struct{}
	err    error
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.Write(b)
}

func (p *proc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// startProc starts bin with env; the process is killed at the end of the test if still alive.
func startProc(t *testing.T, env []string, bin string, args ...string) *proc {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), bin, args...) //nolint:gosec // a binary this test built.
	cmd.Env = env
	p := &proc{cmd: cmd, lines: make(chan string, 1024), exited: make(chan struct{})}
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for sc.Scan() {
			_, _ = p.Write(append(sc.Bytes(), '\n'))
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
	}()
	go func() {
		p.err = cmd.Wait()
		_ = pw.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				<-p.exited
			}
		}
	})
	return p
}

// signal sends sig and waits for the exit.
func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
	select {
	case <-p.exited:
	case <-time.After(waitWithin):
		t.Fatalf("the process did not exit after %v. Log:\n%s", sig, p.log())
	}
}

// world is a serving bothy with the demo world.
type world struct {
	base      string
	env       []string
	echoToken string
	tokens    map[string]string // by handle
	ids       map[string]string // principal ids by handle
	threads   map[string]string // thread ids by key
}

// tempDir is a directory the postgres account can traverse (the embedded default runs as it).
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "echo-e2e-")
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { //nolint:gosec // a directory, traversable on purpose.
		t.Fatalf("chmod: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// serve starts bothy serve on an embedded PostgreSQL and builds the demo world, as make run
// and make demo do.
func serve(t *testing.T, extraEnv ...string) *world {
	t.Helper()
	bothy, _ := binaries(t)
	dir := tempDir(t)
	env := append(os.Environ(),
		"BOTHY_EMBEDDED_DIR="+filepath.Join(dir, "embedded"),
		"BOTHY_HTTP_ADDR=127.0.0.1:0",
		"BOTHY_HTTP_SHUTDOWN_TIMEOUT=5s",
	)
	env = append(env, extraEnv...)
	p := startProc(t, env, bothy, "serve", "--bootstrap-owner")
	var addr string
	deadline := time.After(serveWithin)
	for addr == "" {
		select {
		case line := <-p.lines:
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving http" {
				addr = rec.Addr
			}
		case <-p.exited:
			t.Fatalf("bothy serve exited: %v. Log:\n%s", p.err, p.log())
		case <-deadline:
			t.Fatalf("bothy serve did not listen within %v. Log:\n%s", serveWithin, p.log())
		}
	}
	w := &world{base: "http://" + addr, env: env, tokens: map[string]string{}, ids: map[string]string{}, threads: map[string]string{}}
	waitFor(t, "bothy ready", func() (bool, string) {
		s, _ := w.call(t, "", http.MethodGet, "/readyz", nil, nil)
		return s == http.StatusOK, fmt.Sprint(s)
	})

	tokenFile := filepath.Join(dir, "echo.token")
	cmd := exec.CommandContext(t.Context(), bothy, "admin", "demo", "--json", "--echo-token-file", tokenFile) //nolint:gosec // the binary this test built.
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bothy admin demo: %v", err)
	}
	var demo struct {
		People []struct {
			Handle      string `json:"handle"`
			PrincipalID string `json:"principal_id"`
			Token       string `json:"token"`
		} `json:"people"`
		Threads []struct {
			Key string `json:"key"`
			ID  string `json:"id"`
		} `json:"threads"`
	}
	if err := json.Unmarshal(out, &demo); err != nil {
		t.Fatalf("demo output: %v", err)
	}
	for _, p := range demo.People {
		w.tokens[p.Handle], w.ids[p.Handle] = p.Token, p.PrincipalID
	}
	for _, th := range demo.Threads {
		w.threads[th.Key] = th.ID
	}
	b, err := os.ReadFile(tokenFile) //nolint:gosec // the test's own file.
	if err != nil {
		t.Fatalf("echo token file: %v", err)
	}
	w.echoToken = strings.TrimSpace(string(b))
	if w.echoToken != w.tokens["echo"] || w.ids["echo"] == "" {
		t.Fatal("the demo world has no echo agent, or its token file holds another token")
	}
	return w
}

// startEcho starts the echo agent against the world, with extra environment.
func (w *world) startEcho(t *testing.T, extraEnv ...string) *proc {
	t.Helper()
	_, echo := binaries(t)
	env := append(os.Environ(),
		"BOTHY_URL="+w.base,
		"BOTHY_AGENT_TOKEN="+w.echoToken,
		"ECHO_MIN_BACKOFF=50ms",
		"ECHO_MAX_BACKOFF=500ms",
	)
	return startProc(t, append(env, extraEnv...), echo)
}

// call sends one request with token and decodes a JSON answer into out.
func (w *world) call(t *testing.T, token, method, path string, in, out any) (int, http.Header) {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, w.base+path, body)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return 0, nil
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %q: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode, resp.Header
}

// waitFor polls cond until it holds, or fails the test after waitWithin with what it saw.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(waitWithin)
	for {
		ok, saw := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; last seen: %s", what, waitWithin, saw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestEchoAgentStartsAgainstBothy starts the agent against a real bothy with the demo world:
// it creates its durable consumer, its heartbeats make it online in Sam's snapshot, it
// connects to the gateway resumed from its consumer (an event reaches it and is acknowledged;
// a mention is answered live), and it stops cleanly on SIGTERM; a restart finds the consumer
// where it was.
func TestEchoAgentStartsAgainstBothy(t *testing.T) {
	t.Parallel()
	w := serve(t)
	agent := w.startEcho(t)

	var consumer struct {
		Name     string `json:"name"`
		AckedSeq int64  `json:"acked_seq"`
	}
	waitFor(t, "the echo consumer exists", func() (bool, string) {
		s, _ := w.call(t, w.echoToken, http.MethodGet, "/api/v1/consumers/echo", nil, &consumer)
		return s == http.StatusOK, fmt.Sprintf("%d, agent log:\n%s", s, agent.log())
	})
	waitFor(t, "echo online in Sam's snapshot", func() (bool, string) {
		var snap struct {
			Agents []struct {
				Agent struct {
					Handle string `json:"handle"`
				} `json:"agent"`
				State string `json:"state"`
			} `json:"agents"`
		}
		s, _ := w.call(t, w.tokens["sam"], http.MethodGet, "/api/v1/sync/snapshot", nil, &snap)
		for _, a := range snap.Agents {
			if a.Agent.Handle == "echo" {
				return a.State == "online", fmt.Sprintf("%d %+v", s, snap.Agents)
			}
		}
		return false, fmt.Sprintf("%d %+v", s, snap.Agents)
	})
	// A message the agent may read (Support is the agent's) reaches it through the gateway
	// and is acknowledged on its consumer; the REST fallback would have logged the session's end.
	seq := w.postAndFind(t, "sam", w.threads["demo:support-tickets-2"], "A message for everyone in Support")
	waitFor(t, "the consumer acknowledges the message", func() (bool, string) {
		s, _ := w.call(t, w.echoToken, http.MethodGet, "/api/v1/consumers/echo", nil, &consumer)
		return s == http.StatusOK && consumer.AckedSeq >= seq, fmt.Sprintf("%d %+v, want acked_seq >= %d", s, consumer, seq)
	})
	if strings.Contains(agent.log(), "gateway session ended") {
		t.Fatalf("the agent fell back to the REST page. Log:\n%s", agent.log())
	}
	// A mention while the agent is connected: the invocation arrives live on the gateway and
	// is answered once.
	tickets2 := w.threads["demo:support-tickets-2"]
	w.postAndFind(t, "sam", tickets2, "@echo live")
	waitFor(t, "the live answer", func() (bool, string) {
		var list struct {
			Items []struct {
				AuthorID  string `json:"author_id"`
				ContentMD string `json:"content_md"`
			} `json:"items"`
		}
		s, _ := w.call(t, w.tokens["sam"], http.MethodGet, "/api/v1/threads/"+tickets2+"/messages", nil, &list)
		var got []string
		for _, m := range list.Items {
			if m.AuthorID == w.ids["echo"] {
				got = append(got, m.ContentMD)
			}
		}
		return len(got) == 1 && got[0] == "Echo: live", fmt.Sprintf("%d %q; log:\n%s", s, got, agent.log())
	})
	if strings.Contains(agent.log(), "gateway session ended") {
		t.Fatalf("the agent fell back to the REST page. Log:\n%s", agent.log())
	}

	agent.signal(t, syscall.SIGTERM)
	if agent.err != nil || !strings.Contains(agent.log(), "echo agent stopped") {
		t.Fatalf("the agent exited with %v on SIGTERM. Log:\n%s", agent.err, agent.log())
	}

	again := w.startEcho(t)
	var after struct {
		Name     string `json:"name"`
		AckedSeq int64  `json:"acked_seq"`
	}
	waitFor(t, "the restarted agent", func() (bool, string) {
		return strings.Contains(again.log(), "echo agent started"), again.log()
	})
	if s, _ := w.call(t, w.echoToken, http.MethodGet, "/api/v1/consumers/echo", nil, &after); s != http.StatusOK || after.AckedSeq < consumer.AckedSeq {
		t.Fatalf("the consumer after the restart: %d %+v, before %+v", s, after, consumer)
	}
}

// postAndFind posts content into the thread as who and returns the seq of its
// message.created event (read from who's catch-up).
func (w *world) postAndFind(t *testing.T, who, threadID, content string) int64 {
	t.Helper()
	var msg struct {
		ID string `json:"id"`
	}
	if s, _ := w.call(t, w.tokens[who], http.MethodPost, "/api/v1/threads/"+threadID+"/messages", map[string]string{"content_md": content}, &msg); s != http.StatusCreated {
		t.Fatalf("postMessage as %s = %d", who, s)
	}
	for _, ev := range w.events(t, who, 0) {
		if ev.Type == "message.created" && ev.Resource.ID == msg.ID {
			return ev.Seq
		}
	}
	t.Fatalf("no message.created for %s in %s's catch-up", msg.ID, who)
	return 0
}

// event is an event envelope, as far as the tests read it.
type event struct {
	Seq      int64  `json:"seq"`
	Type     string `json:"type"`
	Resource struct {
		ID string `json:"id"`
	} `json:"resource"`
	Payload json.RawMessage `json:"payload"`
}

// events is who's whole catch-up after the cursor.
func (w *world) events(t *testing.T, who string, after int64) []event {
	t.Helper()
	var out []event
	for {
		var page struct {
			Events     []event `json:"events"`
			NextCursor int64   `json:"next_cursor"`
			HeadSeq    int64   `json:"head_seq"`
		}
		if s, _ := w.call(t, w.tokens[who], http.MethodGet, fmt.Sprintf("/api/v1/events?after=%d", after), nil, &page); s != http.StatusOK {
			t.Fatalf("listEvents as %s = %d", who, s)
		}
		out = append(out, page.Events...)
		if page.NextCursor >= page.HeadSeq {
			return out
		}
		after = page.NextCursor
	}
}
