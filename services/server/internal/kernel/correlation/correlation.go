// Package correlation carries the request (correlation) id through a
// context, so logs, problem responses and events of one request can be tied
// together without passing the id by hand.
package correlation

import "context"

// Header is the HTTP header that carries the id in both directions; a valid
// incoming value is kept so a caller can follow its own id through our logs.
const Header = "X-Request-Id"

// MaxLen is the longest id accepted from outside; longer values are
// replaced so a client cannot bloat every log line of its request.
const MaxLen = 128

type ctxKey struct{}

// With returns a context carrying id. The id is stored as given; callers
// taking it from outside check it with Valid first.
func With(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// From returns the id carried by ctx, or "" when there is none, so callers
// can log or echo it without a presence check.
func From(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// Valid reports whether id may be taken from a client as is: 1 to MaxLen
// characters of A-Z, a-z, 0-9 and . _ : -, which keeps log lines and
// headers free of injection.
func Valid(id string) bool {
	if id == "" || len(id) > MaxLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}
