package edge

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	"bothy.example.com/server/internal/wire"
	"bothy.example.com/server/internal/wiretest"
)

// The abuse bounds of ADR 0019 over real HTTP: timeouts and the connection cap on a served
// App (they live in the server and its listener), rate limits through the validating client
// on a second App over the world's database, built with tight keys after the world was made
// with the defaults.

// servedApp wires a second App over the world's database with settings and serves it with
// ServeListener (every role) until the test ends; it returns the base URL.
func servedApp(t *testing.T, w *e2etest.ChatWorld, settings map[config.Key]string) string {
	t.Helper()
	settings[config.DatabaseURL] = w.Env.DatabaseURL
	app, err := wire.New(t.Context(), e2etest.LoadConfig(t, settings), wiretest.TestLogger(t), wire.Options{Clock: w.Env.Clock})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(app.Close)
	base, stop, done := e2etest.Serving(t, app)
	t.Cleanup(func() {
		stop()
		if err := e2etest.WaitServe(t, done, e2etest.WaitTimeout); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return base
}

// limitedWorld is the world w seen through a second App over its database with settings.
func limitedWorld(t *testing.T, w *e2etest.ChatWorld, settings map[config.Key]string) *e2etest.ChatWorld {
	t.Helper()
	opts := []wiretest.Option{wiretest.WithDatabaseURL(w.Env.DatabaseURL)}
	for k, v := range settings {
		opts = append(opts, wiretest.WithSetting(k, v))
	}
	lw := *w
	lw.Env = wiretest.New(t, opts...)
	return &lw
}

// rawConn is a plain TCP connection to a served App, for clients no http.Client would be:
// one that drips its body, one that idles between requests.
type rawConn struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func dialRaw(t *testing.T, base string) *rawConn {
	t.Helper()
	var d net.Dialer
	c, err := d.DialContext(t.Context(), "tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &rawConn{t: t, conn: c, r: bufio.NewReader(c)}
}

// rawReply is a response read off a rawConn, its body read in full.
type rawReply struct {
	StatusCode int
	Header     http.Header
	Body       string
	Close      bool
}

// get sends a GET of path on the connection and reads its response.
func (c *rawConn) get(path string) rawReply {
	c.t.Helper()
	if _, err := fmt.Fprintf(c.conn, "GET %s HTTP/1.1\r\nHost: bothy\r\n\r\n", path); err != nil {
		c.t.Fatalf("write GET %s: %v", path, err)
	}
	return c.response()
}

func (c *rawConn) response() rawReply {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(e2etest.WaitTimeout))
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		c.t.Fatalf("read response: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("read body: %v", err)
	}
	return rawReply{StatusCode: resp.StatusCode, Header: resp.Header, Body: string(body), Close: resp.Close}
}

// closedWithin reads until the server closes the connection and returns how long that took;
// it fails the test when the connection is still open after limit.
func (c *rawConn) closedWithin(limit time.Duration) time.Duration {
	c.t.Helper()
	start := time.Now()
	_ = c.conn.SetReadDeadline(start.Add(limit))
	_, err := io.Copy(io.Discard, c.r)
	elapsed := time.Since(start)
	var ne net.Error
	if err != nil && errorAs(err, &ne) && ne.Timeout() {
		c.t.Fatalf("the connection is still open after %v", limit)
	}
	return elapsed
}

func errorAs(err error, target *net.Error) bool {
	ne, ok := err.(net.Error) //nolint:errorlint // a read error of a net.Conn is the net.Error itself
	if ok {
		*target = ne
	}
	return ok
}

// TestSlowBodyIsClosedAtReadTimeout: a client sending its body a byte a second is cut off at
// http.read_timeout.
func TestSlowBodyIsClosedAtReadTimeout(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	base := servedApp(t, w, map[config.Key]string{config.HTTPReadTimeout: "2s", config.HTTPReadHeaderTimeout: "1s"})
	c := dialRaw(t, base)
	body := `{"content_md":"One byte a second, for ever and ever"}`
	head := fmt.Sprintf("POST /api/v1/threads/%s/messages HTTP/1.1\r\nHost: bothy\r\n"+
		"Authorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		w.TicketThread, w.Alex.Token, len(body))
	start := time.Now()
	if _, err := io.WriteString(c.conn, head); err != nil {
		t.Fatal(err)
	}
	go func() { // drips until the server closes the connection
		for i := range len(body) {
			if _, err := c.conn.Write([]byte{body[i]}); err != nil {
				return
			}
			time.Sleep(time.Second)
		}
	}()
	c.closedWithin(15 * time.Second)
	if elapsed := time.Since(start); elapsed < 1500*time.Millisecond || elapsed > 8*time.Second {
		t.Fatalf("closed after %v, want about http.read_timeout (2s)", elapsed)
	}
}

// TestIdleKeepAliveIsClosedAtIdleTimeout: a keep-alive connection that sends no next
// request is closed at http.idle_timeout; one that keeps asking stays.
func TestIdleKeepAliveIsClosedAtIdleTimeout(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	base := servedApp(t, w, map[config.Key]string{config.HTTPIdleTimeout: "1s"})
	busy := dialRaw(t, base)
	c := dialRaw(t, base)
	if r := c.get("/healthz"); r.StatusCode != http.StatusOK {
		t.Fatalf("healthz = %d", r.StatusCode)
	}
	start := time.Now()
	for range 4 { // 2 s of requests every half second on the other connection
		if r := busy.get("/healthz"); r.StatusCode != http.StatusOK {
			t.Fatalf("healthz on the busy connection = %d", r.StatusCode)
		}
		time.Sleep(500 * time.Millisecond)
	}
	c.closedWithin(10 * time.Second)
	if elapsed := time.Since(start); elapsed > 6*time.Second {
		t.Fatalf("the idle connection was closed after %v, want about http.idle_timeout (1s)", elapsed)
	}
	if r := busy.get("/healthz"); r.StatusCode != http.StatusOK {
		t.Fatalf("the busy connection: healthz = %d", r.StatusCode)
	}
}

// TestConnectionsBeyondTheCapAreRefused: with http.max_connections open, a new connection is
// answered 503 with Retry-After and closed at once, and counted; once one closes, a new one
// is served.
func TestConnectionsBeyondTheCapAreRefused(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	base := servedApp(t, w, map[config.Key]string{config.HTTPMaxConnections: "2"})
	first, second := dialRaw(t, base), dialRaw(t, base)
	for _, c := range []*rawConn{first, second} {
		if r := c.get("/healthz"); r.StatusCode != http.StatusOK {
			t.Fatalf("healthz within the cap = %d", r.StatusCode)
		}
	}
	third := dialRaw(t, base)
	r := third.get("/healthz")
	if r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" ||
		r.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("beyond the cap: %d %v, want 503 problem with Retry-After", r.StatusCode, r.Header)
	}
	if elapsed := third.closedWithin(5 * time.Second); elapsed > 2*time.Second {
		t.Fatalf("the refused connection stayed open %v", elapsed)
	}

	_ = first.conn.Close()
	// Until the server has seen the first connection close, a new one is
	// refused too and counted: the count is the third's refusal and these.
	deadline := time.Now().Add(e2etest.WaitTimeout)
	refused := 1
	for {
		c := dialRaw(t, base)
		r := c.get("/metrics")
		if r.StatusCode == http.StatusOK {
			want := fmt.Sprintf("bothy_http_connections_refused_total %d", refused)
			for _, line := range []string{want, "bothy_http_connections_open 2"} {
				if !strings.Contains(r.Body, line+"\n") {
					t.Errorf("metrics lack %q in %s", line, r.Body)
				}
			}
			break
		}
		if r.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("a connection while the cap is reached: %d, want 503", r.StatusCode)
		}
		refused++
		if time.Now().After(deadline) {
			t.Fatal("no connection is served after one of the two closed")
		}
		_ = c.conn.Close()
		time.Sleep(50 * time.Millisecond)
	}
}

// metric returns the line of the named series in the App's /metrics.
func metric(t *testing.T, w *e2etest.ChatWorld, series string) string {
	t.Helper()
	r := w.Env.Client.Get("/metrics")
	for line := range strings.SplitSeq(string(r.Body), "\n") {
		if strings.HasPrefix(line, series+" ") {
			return line
		}
	}
	t.Fatalf("metrics lack %s", series)
	return ""
}

// TestTokenOverItsWriteRateGets429: a token beyond its write burst gets 429
// too_many_requests with Retry-After, counted by bothy_http_rate_limited_total; another
// token is not affected, reads are not limited, and a client writing below the rate is
// never refused.
func TestTokenOverItsWriteRateGets429(t *testing.T) {
	t.Parallel()
	w := limitedWorld(t, e2etest.NewChatWorld(t, false), map[config.Key]string{
		config.RateTokenWritesPerSecond: "1",
		config.RateTokenWritesBurst:     "3",
	})
	path := "/api/v1/threads/" + w.TicketThread.String() + "/messages"
	for i := range 3 {
		w.Post(t, w.Alex, w.TicketThread, fmt.Sprintf("Burst %d", i))
	}
	r := w.Must(t, w.Alex, http.MethodPost, path, `{"content_md":"One too many"}`, http.StatusTooManyRequests, nil)
	r.RequireProblem(t, http.StatusTooManyRequests, "too_many_requests")
	if got := r.Header.Get("Retry-After"); got != "1" {
		t.Fatalf("Retry-After = %q, want 1", got)
	}
	if got := metric(t, w, `bothy_http_rate_limited_total{limit="token_writes"}`); !strings.HasSuffix(got, " 1") {
		t.Fatalf("metric: %s, want 1", got)
	}
	// Another token writes, Alex still reads.
	w.Post(t, w.Sam, w.CampaignThread, "Sam is not limited by Alex's writes")
	w.Must(t, w.Alex, http.MethodGet, "/api/v1/me", "", http.StatusOK, nil)

	// Below the rate (one write a second) Alex is never refused.
	for i := range 10 {
		w.Env.Clock.Advance(time.Second)
		w.Post(t, w.Alex, w.TicketThread, fmt.Sprintf("Steady %d", i))
	}
	if got := metric(t, w, `bothy_http_rate_limited_total{limit="token_writes"}`); !strings.HasSuffix(got, " 1") {
		t.Fatalf("metric: %s, want still 1", got)
	}
}

// TestAddressOverItsWriteRateGets429: writes from one address share a limit whatever
// their tokens.
func TestAddressOverItsWriteRateGets429(t *testing.T) {
	t.Parallel()
	w := limitedWorld(t, e2etest.NewChatWorld(t, false), map[config.Key]string{
		config.RateAddressWritesPerSecond: "1",
		config.RateAddressWritesBurst:     "2",
	})
	w.Post(t, w.Alex, w.TicketThread, "From 127.0.0.1")
	w.Post(t, w.Sam, w.CampaignThread, "From 127.0.0.1 too")
	r := w.Must(t, w.Sam, http.MethodPost, "/api/v1/threads/"+w.CampaignThread.String()+"/messages",
		`{"content_md":"Third from the address"}`, http.StatusTooManyRequests, nil)
	r.RequireProblem(t, http.StatusTooManyRequests, "too_many_requests")
	if got := metric(t, w, `bothy_http_rate_limited_total{limit="address_writes"}`); !strings.HasSuffix(got, " 1") {
		t.Fatalf("metric: %s, want 1", got)
	}
	w.Env.Clock.Advance(time.Second)
	w.Post(t, w.Sam, w.CampaignThread, "After a second")
}

// TestFailedAuthOverItsRateGets429: failed authentications (REST or the gateway's upgrade)
// from one address beyond the burst make every later request from it 429, a valid token's
// too, on REST and on the gateway, until the bucket refills. Requests without credentials
// do not count.
func TestFailedAuthOverItsRateGets429(t *testing.T) {
	t.Parallel()
	world := e2etest.NewChatWorld(t, false)
	for _, via := range []string{"rest", "gateway"} {
		t.Run("failures via "+via, func(t *testing.T) {
			t.Parallel()
			w := limitedWorld(t, world, map[config.Key]string{
				config.RateFailedAuthPerMinute: "1",
				config.RateFailedAuthBurst:     "2",
			})
			nobody := e2etest.Actor{Name: "nobody"}
			guess := e2etest.Actor{Name: "a guess", Token: "bothy_" + strings.Repeat("Zq", 21) + "Z"}
			for range 5 { // no credentials: not a guess
				w.Must(t, nobody, http.MethodGet, "/api/v1/me", "", http.StatusUnauthorized, nil)
			}
			for range 2 {
				if via == "rest" {
					w.Must(t, guess, http.MethodGet, "/api/v1/me", "", http.StatusUnauthorized, nil)
				} else if _, refused, _ := e2etest.DialGateway(t, w.Env.Server.URL, guess.Token); refused.Status != http.StatusUnauthorized {
					t.Fatalf("gateway dial with a wrong token: %d, want 401", refused.Status)
				}
			}
			r := w.Must(t, w.Sam, http.MethodGet, "/api/v1/me", "", http.StatusTooManyRequests, nil)
			r.RequireProblem(t, http.StatusTooManyRequests, "too_many_requests")
			if got := r.Header.Get("Retry-After"); got != "60" {
				t.Fatalf("Retry-After = %q, want 60", got)
			}
			if _, refused, err := e2etest.DialGateway(t, w.Env.Server.URL, w.Sam.Token); err == nil || refused.Status != http.StatusTooManyRequests || refused.Header.Get("Retry-After") == "" {
				t.Fatalf("gateway dial with Sam's token: %d %v, want 429 with Retry-After", refused.Status, refused.Header)
			}
			w.Env.Clock.Advance(time.Minute)
			w.Must(t, w.Sam, http.MethodGet, "/api/v1/me", "", http.StatusOK, nil)
			if got := metric(t, w, `bothy_http_rate_limited_total{limit="failed_auth"}`); !strings.HasSuffix(got, " 2") {
				t.Fatalf("metric: %s, want 2 (the REST request and the dial)", got)
			}
		})
	}
}

// TestWebSocketOutlivesTheRequestTimeouts: a gateway connection lives on past
// http.read_timeout, http.write_timeout and http.idle_timeout, and still gets its events.
func TestWebSocketOutlivesTheRequestTimeouts(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	base := servedApp(t, w, map[config.Key]string{
		config.HTTPReadHeaderTimeout: "1s",
		config.HTTPReadTimeout:       "1s",
		config.HTTPWriteTimeout:      "1s",
		config.HTTPIdleTimeout:       "1s",
	})
	c := e2etest.MustDial(t, base, w.Sam.Token)
	c.Send(`{"op":"resume","after":0}`)
	c.Until(w.Head(t), true)
	time.Sleep(3 * time.Second)
	// The message is the next event; Alex's own read state follows it, for
	// Alex alone.
	message := w.Head(t) + 1
	w.Post(t, w.Alex, w.CampaignThread, "Still there after the timeouts?")
	got, _ := c.Until(message, false)
	if len(got) == 0 || got[len(got)-1].Seq != message {
		t.Fatalf("after the timeouts the connection got %v, want the new message's event %d", e2etest.GatewaySeqs(got), message)
	}
}

// TestFailedAuthFramesCountPerAddress: a browser authenticates with an auth frame after the
// upgrade, without an Authorization header; its wrong tokens count against the address as
// a 401 does, so after the burst a valid token's REST request and dial from the address get
// 429, until the bucket refills.
func TestFailedAuthFramesCountPerAddress(t *testing.T) {
	t.Parallel()
	w := limitedWorld(t, e2etest.NewChatWorld(t, false), map[config.Key]string{
		config.RateFailedAuthPerMinute: "1",
		config.RateFailedAuthBurst:     "2",
	})
	e2etest.ServeLive(t, w)
	guess := "bothy_" + strings.Repeat("Zq", 21) + "Z"
	for i := range 2 {
		c := e2etest.MustDial(t, w.Env.Server.URL, "")
		c.Send(`{"op":"auth","token":"` + guess + `"}`)
		f, err := c.Read()
		for err == nil && f.Op != "error" {
			f, err = c.Read()
		}
		if f.Op != "error" || f.Code != "unauthenticated" {
			t.Fatalf("auth frame %d with a wrong token: %s (%v), want an error frame unauthenticated", i, f.Raw, err)
		}
		if _, err := c.Read(); websocket.CloseStatus(err) != gateway.CloseUnauthenticated {
			t.Fatalf("auth frame %d with a wrong token: closed with %v, want %d", i, err, gateway.CloseUnauthenticated)
		}
	}
	r := w.Must(t, w.Sam, http.MethodGet, "/api/v1/me", "", http.StatusTooManyRequests, nil)
	r.RequireProblem(t, http.StatusTooManyRequests, "too_many_requests")
	if _, refused, err := e2etest.DialGateway(t, w.Env.Server.URL, ""); err == nil || refused.Status != http.StatusTooManyRequests {
		t.Fatalf("a dial from the blocked address: %d (%v), want 429", refused.Status, err)
	}
	w.Env.Clock.Advance(time.Minute)
	w.Must(t, w.Sam, http.MethodGet, "/api/v1/me", "", http.StatusOK, nil)
	// A right token in the auth frame counts nothing.
	for range 3 {
		c := e2etest.MustDial(t, w.Env.Server.URL, "")
		c.Send(`{"op":"auth","token":"` + w.Sam.Token + `"}`)
		c.Send(`{"op":"hello"}`)
		c.Expect("ready")
	}
	w.Must(t, w.Sam, http.MethodGet, "/api/v1/me", "", http.StatusOK, nil)
}

// TestGatewayWriteFramesTakeTheTokensWrites: an agent's heartbeat frames take from its token's
// write bucket, the one its REST writes take from (spec 03): within the burst they are carried
// out; the one beyond it is not, and ends the connection with error too_many_requests,
// retry_after_ms and 1013, counted by bothy_http_rate_limited_total. Another token is not
// affected, and once the bucket has refilled the agent reconnects and beats again.
func TestGatewayWriteFramesTakeTheTokensWrites(t *testing.T) {
	t.Parallel()
	w := limitedWorld(t, e2etest.NewChatWorld(t, true), map[config.Key]string{
		config.RateTokenWritesPerSecond: "1",
		config.RateTokenWritesBurst:     "3",
	})
	e2etest.ServeLive(t, w)
	c := e2etest.MustDial(t, w.Env.Server.URL, w.Robin.Token)
	c.Send(`{"op":"hello"}`)
	c.Expect("ready")

	w.Must(t, w.Robin, http.MethodPost, "/api/v1/agents/me/heartbeat", "", http.StatusOK, nil) // one of three
	// That heartbeat turns Robin online: its agent.presence_changed reaches Robin's own socket
	// whenever the log tail reads it. Take it first, so the frames below answer in the order
	// the test asserts (it could land between the pong and the error frame).
	var online struct {
		Event struct {
			Type string `json:"type"`
		} `json:"event"`
	}
	if err := json.Unmarshal(c.Expect("event").Raw, &online); err != nil || online.Event.Type != "agent.presence_changed" {
		t.Fatalf("the first event after the REST heartbeat: %q (%v), want agent.presence_changed", online.Event.Type, err)
	}
	c.Send(`{"op":"heartbeat"}`)
	c.Send(`{"op":"heartbeat"}`)
	c.Send(`{"op":"ping"}`)
	c.ExpectPong()
	c.Send(`{"op":"heartbeat"}`)
	f := c.Expect("error")
	var body struct {
		Code         string `json:"code"`
		RetryAfterMS int64  `json:"retry_after_ms"`
	}
	if err := json.Unmarshal(f.Raw, &body); err != nil {
		t.Fatal(err)
	}
	if body.Code != "too_many_requests" || body.RetryAfterMS < 1 || body.RetryAfterMS > 1000 {
		t.Fatalf("the heartbeat frame beyond the burst answered %s, want too_many_requests with retry_after_ms in 1..1000", f.Raw)
	}
	if code, _ := c.Closed(); code != gateway.CloseTryAgainLater {
		t.Fatalf("closed with %d, want %d", code, gateway.CloseTryAgainLater)
	}
	if got := metric(t, w, `bothy_http_rate_limited_total{limit="token_writes"}`); !strings.HasSuffix(got, " 1") {
		t.Fatalf("metric: %s, want 1", got)
	}
	// The REST write of the same token finds the same empty bucket; Sam's token is not touched.
	w.Must(t, w.Robin, http.MethodPost, "/api/v1/agents/me/heartbeat", "", http.StatusTooManyRequests, nil)
	w.Post(t, w.Sam, w.CampaignThread, "Sam is not limited by Robin's frames")

	w.Env.Clock.Advance(time.Second)
	again := e2etest.MustDial(t, w.Env.Server.URL, w.Robin.Token)
	again.Send(`{"op":"hello"}`)
	again.Expect("ready")
	again.Send(`{"op":"heartbeat"}`)
	again.Send(`{"op":"ping"}`)
	again.ExpectPong()
}
