package httpapi

import (
	"errors"
	"net/http"
	"strings"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/problem"
)

// bearerScheme is the authentication scheme of every token (RFC 6750), matched
// case-insensitively as RFC 9110 asks.
const bearerScheme = "Bearer"

// Authenticate returns the middleware that authenticates a request: it reads the one
// `Authorization: Bearer <token>` header, asks auth for the actor and passes the request on
// with the actor in its context (actor.With). A missing or malformed header and every token
// auth refuses get the same 401 unauthenticated problem, byte for byte apart from its
// request_id, with `WWW-Authenticate: Bearer`; which case it was is told to nobody. Any other
// failure (the database) is a 500 whose logged error never holds the token. The token is
// never logged, put in an error or in a response. wire attaches it to every operation whose
// OpenAPI security requirement is not empty.
func Authenticate(auth identity.Authenticator) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			token, ok := bearerToken(r.Header)
			if !ok {
				unauthenticated(w, r)
				return
			}
			a, err := auth.Authenticate(r.Context(), token)
			if errors.Is(err, problem.ErrUnauthenticated) {
				unauthenticated(w, r)
				return
			}
			if err != nil {
				problem.Write(w, r, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(actor.With(r.Context(), a)))
		})
	}
}

// bearerToken returns the token of the request's one Authorization header: the scheme Bearer,
// then one or more spaces, then a token without spaces. Anything else (no header, two headers,
// another scheme, an empty token) is not ok.
func bearerToken(h http.Header) (string, bool) {
	values := h.Values("Authorization")
	if len(values) != 1 {
		return "", false
	}
	scheme, rest, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, bearerScheme) {
		return "", false
	}
	token := strings.TrimLeft(rest, " ")
	if token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}

// unauthenticated answers 401 with the kind's own problem, never with an error that could
// differ between the cases.
func unauthenticated(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", bearerScheme)
	problem.Write(w, r, problem.ErrUnauthenticated)
}
