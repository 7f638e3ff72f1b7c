package catchup

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
)

// TestDirectMessageIsPrivateToItsParticipants: nobody, the owner included, can open a direct
// message to a third party (spec 04, "A direct message is private to its participants"):
// createGrant on the DM channel for a non-participant is 409 conflict whatever the role (for an
// owner who takes part) or 404 (for one who does not: the DM is invisible to it), an instance
// grant does not reach the DM either, and the third party gets 404 on the DM's reads and sees
// nothing of it in catch-up and in its snapshot.
func TestDirectMessageIsPrivateToItsParticipants(t *testing.T) {
	t.Parallel()
	w := e2etest.NewSyncPeople(t)
	dm := w.DM(t, w.Alex, w.Sam)
	th := w.Thread(t, w.Alex, dm, "Sam, about the salary review")
	w.Post(t, w.Sam, th.Id, "Thanks Alex, let us talk tomorrow")
	ownDM := w.DM(t, w.Owner, w.Sam)
	w.Thread(t, w.Owner, ownDM, "Sam, a word about the budget")

	for _, role := range []string{"viewer", "member", "admin"} {
		body := fmt.Sprintf(`{"principal_id":%q,"resource_kind":"channel","resource_id":%q,"role":%q}`, w.Robin.ID, ownDM, role)
		w.Do(t, w.Owner, http.MethodPost, "/api/v1/grants", body).RequireProblem(t, http.StatusConflict, "conflict")
		body = fmt.Sprintf(`{"principal_id":%q,"resource_kind":"channel","resource_id":%q,"role":%q}`, w.Robin.ID, dm, role)
		w.Do(t, w.Owner, http.MethodPost, "/api/v1/grants", body).RequireProblem(t, http.StatusNotFound, "not_found")
	}
	// An instance grant reaches every space and channel, not a direct message.
	w.Grant(t, w.Robin, "instance", uuid.Nil, "viewer")
	// A participant can add nobody either (it lacks grant.admin on the channel: 404 or 403).
	body := fmt.Sprintf(`{"principal_id":%q,"resource_kind":"channel","resource_id":%q,"role":"viewer"}`, w.Robin.ID, dm)
	if r := w.Do(t, w.Alex, http.MethodPost, "/api/v1/grants", body); r.Status != http.StatusForbidden && r.Status != http.StatusNotFound {
		t.Fatalf("createGrant on the DM as a participant = %d %s, want 403 or 404", r.Status, r.Body)
	}

	// Robin reads nothing of it.
	w.Do(t, w.Robin, http.MethodGet, "/api/v1/threads/"+th.Id.String()+"/messages", "").
		RequireProblem(t, http.StatusNotFound, "not_found")
	w.Do(t, w.Robin, http.MethodPut, "/api/v1/channels/"+dm.String()+"/draft", `{"content_md":"Hello"}`).
		RequireProblem(t, http.StatusNotFound, "not_found")
	w.Do(t, w.Robin, http.MethodPost, "/api/v1/threads/"+th.Id.String()+"/messages", `{"content_md":"Hello"}`).
		RequireProblem(t, http.StatusNotFound, "not_found")
	for _, a := range []e2etest.Actor{w.Robin, w.Owner} {
		events, _ := w.CatchUp(t, a, 0, 100)
		for _, e := range events {
			if e.ChannelID != nil && *e.ChannelID == dm {
				t.Errorf("%s's catch-up has the DM's event %s (seq %d)", a.Name, e.Type, e.Seq)
			}
		}
		snap, _ := w.Snapshot(t, a)
		for _, c := range snap.Channels {
			if c.Id == dm {
				t.Errorf("%s's snapshot lists the DM", a.Name)
			}
		}
	}
	w.Do(t, w.Owner, http.MethodGet, "/api/v1/threads/"+th.Id.String()+"/messages", "").
		RequireProblem(t, http.StatusNotFound, "not_found")
	// The participants still read it.
	var list apigen.MessageList
	w.Must(t, w.Sam, http.MethodGet, "/api/v1/threads/"+th.Id.String()+"/messages", "", http.StatusOK, &list)
	if len(list.Items) != 2 {
		t.Errorf("Sam reads %d messages of the DM, want 2", len(list.Items))
	}
}
