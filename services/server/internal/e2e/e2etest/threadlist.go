package e2etest

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
)

// The integration tests of listChannelThreads (ADR 0029) run over real HTTP
// through the validating client, on the ChatWorld: Sam is a member of Marketing (campaigns)
// and a viewer of Support (tickets), Robin holds no grant.

// ThreadsPath is the thread list of a channel with the query q (may be empty).
func ThreadsPath(channel uuid.UUID, q url.Values) string {
	p := "/api/v1/channels/" + channel.String() + "/threads"
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
}

// ListThreads reads one page of the channel's threads as a.
func (w *ChatWorld) ListThreads(t *testing.T, a Actor, channel uuid.UUID, q url.Values) (apigen.ThreadSummaryList, string) {
	t.Helper()
	var page apigen.ThreadSummaryList
	r := w.Must(t, a, http.MethodGet, ThreadsPath(channel, q), "", http.StatusOK, &page)
	return page, r.Header.Get("ETag")
}
