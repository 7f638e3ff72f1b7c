package wire_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
)

// TestDirectMessageIsPrivateToItsParticipants: nobody, the owner included, can open a direct
// message to a third party (spec 04, "A direct message is private to its participants"):
// createGrant on the DM channel for a non-participant is 409 conflict whatever the role (for an
// owner who takes part) or 404 (for one who does not: the DM is invisible to it), an instance
// grant does not reach the DM either, and the third party gets 404 on the DM's reads and sees
// nothing of it in catch-up and in its snapshot.
func TestDirectMessageIsPrivateToItsParticipants(t *testing.T) {
	t.Parallel()
	w := newSyncPeople(t)
	dm := w.dm(t, w.alex, w.sam)
	th := w.thread(t, w.alex, dm, "Sam, about the salary review")
	w.post(t, w.sam, th.Id, "Thanks Alex, let us talk tomorrow")
	ownDM := w.dm(t, w.owner, w.sam)
	w.thread(t, w.owner, ownDM, "Sam, a word about the budget")

	for _, role := range []string{"viewer", "member", "admin"} {
		body := fmt.Sprintf(`{"principal_id":%q,"resource_kind":"channel","resource_id":%q,"role":%q}`, w.robin.id, ownDM, role)
		w.do(t, w.owner, http.MethodPost, "/api/v1/grants", body).RequireProblem(t, http.StatusConflict, "conflict")
		body = fmt.Sprintf(`{"principal_id":%q,"resource_kind":"channel","resource_id":%q,"role":%q}`, w.robin.id, dm, role)
		w.do(t, w.owner, http.MethodPost, "/api/v1/grants", body).RequireProblem(t, http.StatusNotFound, "not_found")
	}
	// An instance grant reaches every space and channel, not a direct message.
	w.grant(t, w.robin, "instance", uuid.Nil, "viewer")
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
	for _, a := range []worldActor{w.robin, w.owner} {
		events, _ := w.catchUp(t, a, 0, 100)
		for _, e := range events {
			if e.ChannelID != nil && *e.ChannelID == dm {
				t.Errorf("%s's catch-up has the DM's event %s (seq %d)", a.name, e.Type, e.Seq)
			}
		}
		snap, _ := w.snapshot(t, a)
		for _, c := range snap.Channels {
			if c.Id == dm {
				t.Errorf("%s's snapshot lists the DM", a.name)
			}
		}
	}
	w.do(t, w.owner, http.MethodGet, "/api/v1/threads/"+th.Id.String()+"/messages", "").
		RequireProblem(t, http.StatusNotFound, "not_found")
	// The participants still read it.
	var list apigen.MessageList
	w.must(t, w.sam, http.MethodGet, "/api/v1/threads/"+th.Id.String()+"/messages", "", http.StatusOK, &list)
	if len(list.Items) != 2 {
		t.Errorf("Sam reads %d messages of the DM, want 2", len(list.Items))
	}
}
