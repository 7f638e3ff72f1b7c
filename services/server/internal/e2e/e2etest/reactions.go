package e2etest

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/wiretest"
)

// ReactionPath is the path of a reaction to a message, the reaction percent-encoded as one
// path segment like a client does.
func ReactionPath(message uuid.UUID, reaction string) string {
	return "/api/v1/messages/" + message.String() + "/reactions/" + url.PathEscape(reaction)
}

// React adds (PUT) or removes (DELETE) a's reaction and requires 204.
func (w *ChatWorld) React(t *testing.T, a Actor, method string, message uuid.UUID, reaction string) *wiretest.Response {
	t.Helper()
	return w.Must(t, a, method, ReactionPath(message, reaction), "", http.StatusNoContent, nil)
}

// ReactionsOf returns the reactions of the message as a reads them through listMessages.
func (w *ChatWorld) ReactionsOf(t *testing.T, a Actor, thread, message uuid.UUID) []apigen.ReactionCount {
	t.Helper()
	for _, m := range w.Messages(t, a, thread) {
		if m.Id == message {
			return m.Reactions
		}
	}
	t.Fatalf("%s does not list message %s in thread %s", a.Name, message, thread)
	return nil
}
