package httpmw_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/httpmw"
	"bothy.example.com/server/internal/kernel/ratelimit"
)

func limiter(clk clock.Clock, rate float64, burst int) *ratelimit.Limiter {
	return ratelimit.New(ratelimit.Config{Rate: rate, Burst: burst, MaxBuckets: 100, SweepInterval: time.Minute}, clk)
}

// limitEpoch is where the limit tests' fake clocks start.
var limitEpoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// refusals records the names Refused is told.
type refusals []string

func (r *refusals) add(name string) { *r = append(*r, name) }

func TestClientAddrs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, trusted, remote, xff, want string
	}{
		{"the peer by default", "", "192.0.2.7:5555", "", "192.0.2.7"},
		{"a forwarded header from an untrusted peer is ignored", "", "192.0.2.7:5555", "198.51.100.1", "192.0.2.7"},
		{"a trusted proxy's header names the client", "10.0.0.0/8", "10.1.2.3:443", "198.51.100.1", "198.51.100.1"},
		{"the rightmost untrusted entry wins", "10.0.0.0/8", "10.1.2.3:443", "203.0.113.9, 198.51.100.1, 10.9.9.9", "198.51.100.1"},
		{"a trusted proxy without the header is the client", "10.1.2.3", "10.1.2.3:443", "", "10.1.2.3"},
		{"garbage in the header stops the walk", "10.0.0.0/8", "10.1.2.3:443", "not-an-address, 10.2.2.2", "10.2.2.2"},
		{"IPv6 is keyed by its /64", "", "[2001:db8:1:2:3:4:5:6]:443", "", "2001:db8:1:2::/64"},
		{"IPv4 in IPv6 is IPv4", "", "[::ffff:192.0.2.7]:443", "", "192.0.2.7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := httpmw.NewClientAddrs(tc.trusted)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/", nil)
			r.RemoteAddr = tc.remote
			if tc.xff != "" {
				r.Header.Set("X-Forwarded-For", tc.xff)
			}
			if got := c.Of(r); got != tc.want {
				t.Fatalf("Of = %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := httpmw.NewClientAddrs("10.0.0.0/8, proxy.example.com"); err == nil {
		t.Fatal("a host name was accepted as a trusted proxy")
	}
}

func TestLimitWrites(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(limitEpoch)
	var refused refusals
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := httpmw.LimitWrites(limiter(clk, 1, 2), httpmw.LimitTokenWrites, httpmw.ActorKey, refused.add)(ok)
	send := func(method string, a *actor.Actor) *httptest.ResponseRecorder {
		r := httptest.NewRequestWithContext(t.Context(), method, "/", strings.NewReader("{}"))
		if a != nil {
			r = r.WithContext(actor.With(r.Context(), *a))
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	alex := actor.Actor{PrincipalID: uuid.New(), Kind: actor.KindPerson}
	sam := actor.Actor{PrincipalID: uuid.New(), Kind: actor.KindPerson}
	for _, m := range []string{http.MethodPost, http.MethodDelete} {
		if rec := send(m, &alex); rec.Code != http.StatusNoContent {
			t.Fatalf("%s within the burst = %d", m, rec.Code)
		}
	}
	rec := send(http.MethodPatch, &alex)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" ||
		!strings.Contains(rec.Body.String(), `"code":"too_many_requests"`) {
		t.Fatalf("over the burst: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	for _, tc := range []struct {
		what   string
		method string
		a      *actor.Actor
	}{
		{"a read", http.MethodGet, &alex},
		{"another actor", http.MethodPut, &sam},
		{"no actor", http.MethodPost, nil},
	} {
		if rec := send(tc.method, tc.a); rec.Code != http.StatusNoContent {
			t.Fatalf("%s was refused: %d", tc.what, rec.Code)
		}
	}
	clk.Advance(time.Second)
	if rec := send(http.MethodPost, &alex); rec.Code != http.StatusNoContent {
		t.Fatalf("a second later = %d", rec.Code)
	}
	if len(refused) != 1 || refused[0] != httpmw.LimitTokenWrites {
		t.Fatalf("refusals %v, want one token_writes", refused)
	}
}

func TestFailedAuth(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(limitEpoch)
	var refused refusals
	addrs, err := httpmw.NewClientAddrs("")
	if err != nil {
		t.Fatal(err)
	}
	// The handler accepts the token "good" only.
	auth := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	h := httpmw.FailedAuth(limiter(clk, 1.0/60, 2), addrs, refused.add)(auth)
	send := func(from, token string) *httptest.ResponseRecorder {
		r := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/", nil)
		r.RemoteAddr = from + ":1234"
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	for range 10 {
		if rec := send("192.0.2.1", ""); rec.Code != http.StatusUnauthorized {
			t.Fatalf("no credentials = %d, want 401 (never limited)", rec.Code)
		}
	}
	for range 2 {
		if rec := send("192.0.2.1", "guess"); rec.Code != http.StatusUnauthorized {
			t.Fatalf("a guess = %d, want 401", rec.Code)
		}
	}
	rec := send("192.0.2.1", "good")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "60" {
		t.Fatalf("a valid token after the burst of failures: %d %v, want 429 with Retry-After 60", rec.Code, rec.Header())
	}
	if rec := send("192.0.2.2", "good"); rec.Code != http.StatusOK {
		t.Fatalf("another address = %d", rec.Code)
	}
	clk.Advance(time.Minute)
	if rec := send("192.0.2.1", "good"); rec.Code != http.StatusOK {
		t.Fatalf("a minute later = %d", rec.Code)
	}
	if len(refused) != 1 || refused[0] != httpmw.LimitFailedAuth {
		t.Fatalf("refusals %v, want one failed_auth", refused)
	}
}

// BenchmarkLimits is the cost per request of the rate limits as wire chains them (the
// failed-authentication and per-address write limits, the per-token write limit) on an authenticated POST that passes them all, beside the same request through the
// bare handler. Each iteration is one request of one of 1,000 actors from one of 1,000
// addresses, so the limiters hold real maps.
func BenchmarkLimits(b *testing.B) {
	clk := clock.System()
	addrs, err := httpmw.NewClientAddrs("")
	if err != nil {
		b.Fatal(err)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusCreated) })
	// The default keys' limits: no request of the loop is refused.
	high := func() *ratelimit.Limiter {
		return ratelimit.New(ratelimit.Config{Rate: 10000, Burst: 10000, MaxBuckets: 100000, SweepInterval: time.Minute}, clk)
	}
	chained := httpmw.FailedAuth(high(), addrs, nil)(
		httpmw.LimitWrites(high(), httpmw.LimitAddressWrites, addrs.Of, nil)(
			httpmw.LimitWrites(high(), httpmw.LimitTokenWrites, httpmw.ActorKey, nil)(handler)))
	const keys = 1000
	reqs := make([]*http.Request, keys)
	for i := range reqs {
		r := httptest.NewRequestWithContext(b.Context(), http.MethodPost, "/api/v1/threads/x/messages", http.NoBody)
		r.RemoteAddr = "198.51." + itoa(i/250) + "." + itoa(i%250) + ":40000"
		r.Header.Set("Authorization", "Bearer token")
		reqs[i] = r.WithContext(actor.With(r.Context(), actor.Actor{PrincipalID: uuid.New(), Kind: actor.KindAgent}))
	}
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{{"bare", handler}, {"limited", chained}} {
		b.Run(bc.name, func(b *testing.B) {
			w := httptest.NewRecorder()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				bc.h.ServeHTTP(w, reqs[i%keys])
				i++
			}
		})
	}
}

func itoa(n int) string {
	const digits = "0123456789"
	if n < 10 {
		return digits[n : n+1]
	}
	return itoa(n/10) + digits[n%10:n%10+1]
}
