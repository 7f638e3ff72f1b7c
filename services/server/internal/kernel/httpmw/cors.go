package httpmw

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"bothy.example.com/server/internal/kernel/correlation"
)

// The lists CORS answers with (spec 05, "Cross-origin requests"). They are fixed: every
// operation of the API takes the same request headers, and a browser only needs to know that
// the method and headers it asks for are among them.
const (
	// corsAllowMethods are the methods of the API's operations.
	corsAllowMethods = "GET, POST, PUT, PATCH, DELETE"
	// corsAllowHeaders are the request headers a page may set beyond the CORS-safelisted ones:
	// the bearer token, a JSON body's type, a POST's idempotency key and a snapshot's ETag.
	corsAllowHeaders = "Authorization, Content-Type, Idempotency-Key, If-None-Match"
	// corsExposeHeaders are the response headers a page may read beyond the safelisted ones.
	corsExposeHeaders = "ETag, " + correlation.Header + ", " + IdempotencyReplayedHeader + ", Retry-After"
)

// CORSConfig is what CORS answers from.
type CORSConfig struct {
	// AllowedOrigins are the origins of http.cors.allowed_origins in the form ParseOrigin
	// returns (lower-case scheme://host[:port]); empty refuses every cross-origin page.
	AllowedOrigins []string
	// MaxAge is http.cors.max_age, sent in whole seconds as a preflight's
	// Access-Control-Max-Age.
	MaxAge time.Duration
}

// CORS lets the browser pages of cfg.AllowedOrigins call the API (the Fetch standard's CORS
// protocol). Every answer gets Vary: Origin, since what it carries depends on the Origin
// header. A request whose Origin is listed gets Access-Control-Allow-Origin with that origin
// (never *: requests carry Authorization) and Access-Control-Expose-Headers, set before the
// handler runs so that every answer, a problem included, carries them; no
// Access-Control-Allow-Credentials is ever sent, because bothy authenticates with bearer
// tokens, not cookies. A preflight from a listed origin (OPTIONS with
// Access-Control-Request-Method) is answered here with 204, the allowed methods and request
// headers and Access-Control-Max-Age, before authentication and routing, which would answer
// 401 or 405. Any other request, an unlisted origin's preflight included, goes on as if CORS
// did not exist and gets no Access-Control-* header; the browser then withholds the answer
// from the page.
func CORS(cfg CORSConfig) func(http.Handler) http.Handler {
	allowed := make(map[string]bool, len(cfg.AllowedOrigins))
	for _, o := range cfg.AllowedOrigins {
		allowed[o] = true
	}
	maxAge := strconv.FormatInt(int64(cfg.MaxAge/time.Second), 10)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			addVary(h, "Origin")
			origin := r.Header.Get("Origin")
			if origin == "" || !allowed[strings.ToLower(origin)] {
				next.ServeHTTP(w, r)
				return
			}
			h.Set("Access-Control-Allow-Origin", origin)
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", corsAllowMethods)
				h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
				h.Set("Access-Control-Max-Age", maxAge)
				w.WriteHeader(http.StatusNoContent)
				return
			}
			h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
			next.ServeHTTP(w, r)
		})
	}
}

// corsHeader reports whether a response header belongs to CORS (Vary included, which CORS
// adds to), so that Recover keeps it on the problem that replaces a panicking handler's
// answer: a browser must be able to read that problem too.
func corsHeader(name string) bool {
	return name == "Vary" || strings.HasPrefix(name, "Access-Control-")
}

// ParseOrigins parses a comma-separated list of origins (the value of
// http.cors.allowed_origins): blanks are trimmed, empty entries dropped, and each entry
// returned as ParseOrigin returns it. It fails naming every entry that is no origin.
func ParseOrigins(list string) ([]string, error) {
	var out []string
	var errs []error
	for o := range strings.SplitSeq(list, ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		p, err := ParseOrigin(o)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

// ParseOrigin returns an allowed origin in the form browsers send it (lower-case
// scheme://host[:port]); anything with a path, query, user or wildcard, or without a scheme
// or host, is an error.
func ParseOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || strings.Contains(s, "*") {
		return "", fmt.Errorf("origin %q is not scheme://host[:port]", s)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}
