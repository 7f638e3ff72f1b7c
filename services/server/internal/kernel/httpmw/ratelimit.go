package httpmw

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/kernel/ratelimit"
)

// The names of the rate limits, as the metric bothy_http_rate_limited_total
// labels the requests each refused (ADR 0019).
const (
	// LimitTokenWrites is the per-token write limit (http.rate_limit.token_writes_*).
	LimitTokenWrites = "token_writes"
	// LimitAddressWrites is the per-address write limit (http.rate_limit.address_writes_*).
	LimitAddressWrites = "address_writes"
	// LimitFailedAuth is the per-address limit on failed authentications
	// (http.rate_limit.failed_auth_*).
	LimitFailedAuth = "failed_auth"
)

// Refused is told the name of the limit each time one refuses a request; the
// composition root counts it in a Prometheus counter. nil is allowed.
type Refused func(limit string)

// IsWrite reports whether method changes state: POST, PUT, PATCH, DELETE.
// Only writes are rate limited; reads are bounded by the connection cap and
// the timeouts.
func IsWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// LimitWrites takes a token of key(r)'s bucket in l for every write request
// and answers 429 too_many_requests with Retry-After when the bucket is
// empty, without running next. A request key maps to "" (no actor, for the
// per-token limit) passes untouched, as do reads. name labels the refusals
// for refused.
func LimitWrites(l *ratelimit.Limiter, name string, key func(*http.Request) string, refused Refused) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !IsWrite(r.Method) {
				next.ServeHTTP(w, r)
				return
			}
			k := key(r)
			if k == "" {
				next.ServeHTTP(w, r)
				return
			}
			if ok, wait := l.Allow(k); !ok {
				tooMany(w, r, wait, name, refused,
					"This client has sent too many writes. Retry after the time in Retry-After.")
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// ActorKey is the key of the per-token write limit: the authenticated actor's
// principal and device, so a token (or the tokens of one principal and
// device) shares one bucket on every route. "" without an actor.
func ActorKey(r *http.Request) string {
	a, ok := actor.From(r.Context())
	if !ok {
		return ""
	}
	return ActorKeyOf(a)
}

// ActorKeyOf is ActorKey's key of an actor: the gateway's frames that write take from the
// bucket their token's REST writes take from.
func ActorKeyOf(a actor.Actor) string {
	return a.PrincipalID.String() + "/" + a.DeviceID.String()
}

// FailedAuth limits token guessing per client address. A request that
// presented credentials (an Authorization header) and was answered 401 takes
// a token of its address's bucket in l; once the bucket is empty every
// request from the address is answered 429 too_many_requests with
// Retry-After, even one with a valid token, until the bucket refilled. A
// request without credentials is not a guess and never counts, so probes of
// the public endpoints and clients that have not logged in yet cannot lock
// an address out. It wraps the gateway's upgrade as well: its 401 for a
// refused Authorization header counts the same.
func FailedAuth(l *ratelimit.Limiter, addrs *ClientAddrs, refused Refused) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			addr := addrs.Of(r)
			if blocked, wait := l.Blocked(addr); blocked {
				tooMany(w, r, wait, LimitFailedAuth, refused,
					"Too many failed authentications from this address. Retry after the time in Retry-After.")
				return
			}
			if len(r.Header.Values("Authorization")) == 0 {
				next.ServeHTTP(w, r)
				return
			}
			rec := &recorder{ResponseWriter: w}
			next.ServeHTTP(rec, r)
			if rec.status == http.StatusUnauthorized {
				l.Take(addr)
			}
		})
	}
}

// tooMany answers 429 with Retry-After in whole seconds, rounded up (at
// least 1, so a client never retries at once).
func tooMany(w http.ResponseWriter, r *http.Request, wait time.Duration, name string, refused Refused, detail string) {
	if refused != nil {
		refused(name)
	}
	secs := max(1, int64(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	problem.Write(w, r, problem.New(problem.ErrRateLimited, detail))
}
