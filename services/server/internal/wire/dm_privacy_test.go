package wire_test

import (
	"fmt"
	"net/http"
	"testing"

	"bothy.example.com/server/internal/apigen"
)

// TestDirectMessageIsPrivateToItsParticipants: nobody, the owner included, can open a direct
// message to a third party through a grant (spec 04, "Direct messages"): createGrant on the
// DM channel for a non-participant is 409 conflict whatever the role, and that principal then
// gets 404 on the DM's reads and sees nothing of it in catch-up and in its snapshot.
func TestDirectMessageIsPrivateToItsParticipants(t *testing.T) {
	t.Parallel()
	w := newSyncPeople(t)
	dm := w.dm(t, w.alex, w.sam)
	th := w.thread(t, w.alex, dm, "Sam, about the salary review")
	w.post(t, w.sam, th.Id, "Thanks Alex, let us talk tomorrow")

	for _, role := range []string{"viewer", "member", "admin"} {
		body := fmt.Sprintf(`{"principal_id":%q,"resource_kind":"channel","resource_id":%q,"role":%q}`, w.robin.id, dm, role)
		r := w.do(t, w.owner, http.MethodPost, "/api/v1/grants", body)
		r.RequireProblem(t, http.StatusConflict, "conflict")
	}
	// A participant can add nobody either (it lacks grant.admin on the channel: 404 or 403).
	body := fmt.Sprintf(`{"principal_id":%q,"resource_kind":"channel","resource_id":%q,"role":"viewer"}`, w.robin.id, dm)
	if r := w.do(t, w.alex, http.MethodPost, "/api/v1/grants", body); r.Status != http.StatusForbidden && r.Status != http.StatusNotFound {
		t.Fatalf("createGrant on the DM as a participant = %d %s, want 403 or 404", r.Status, r.Body)
	}

	// Robin reads nothing of it.
	w.do(t, w.robin, http.MethodGet, "/api/v1/threads/"+th.Id.String()+"/messages", "").
		RequireProblem(t, http.StatusNotFound, "not_found")
	w.do(t, w.robin, http.MethodPut, "/api/v1/channels/"+dm.String()+"/draft", `{"content_md":"Hello"}`).
		RequireProblem(t, http.StatusNotFound, "not_found")
	w.do(t, w.robin, http.MethodPost, "/api/v1/threads/"+th.Id.String()+"/messages", `{"content_md":"Hello"}`).
		RequireProblem(t, http.StatusNotFound, "not_found")
	events, _ := w.catchUp(t, w.robin, 0, 100)
	for _, e := range events {
		if e.ChannelID != nil && *e.ChannelID == dm {
			t.Errorf("Robin's catch-up has the DM's event %s (seq %d)", e.Type, e.Seq)
		}
	}
	snap, _ := w.snapshot(t, w.robin)
	for _, c := range snap.Channels {
		if c.Id == dm {
			t.Errorf("Robin's snapshot lists the DM")
		}
	}
	// The participants still read it.
	var list apigen.MessageList
	w.must(t, w.sam, http.MethodGet, "/api/v1/threads/"+th.Id.String()+"/messages", "", http.StatusOK, &list)
	if len(list.Items) != 2 {
		t.Errorf("Sam reads %d messages of the DM, want 2", len(list.Items))
	}
}
