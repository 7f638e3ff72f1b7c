package e2etest

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	syncdomain "bothy.example.com/server/internal/sync/domain"
)

// CheckedPage reads one page as a after the cursor and fails unless it delivers exactly the
// events of (after, next_cursor] the model lets a receive now, none of them delivered to a
// before. It returns next_cursor and head_seq.
func (w *SyncWorld) CheckedPage(t *testing.T, m *ReadModel, a Actor, after int64, limit int, received map[uuid.UUID]bool) (int64, int64) {
	t.Helper()
	p := w.Page(t, a, after, limit)
	var want []syncdomain.StoredEvent
	for _, e := range w.EventsAfter(t, after) {
		if e.Seq > p.NextCursor {
			break
		}
		if m.Receives(a.ID, e) {
			want = append(want, e)
		}
	}
	RequireSameEvents(t, fmt.Sprintf("%s's page after %d (limit %d, next_cursor %d)", a.Name, after, limit, p.NextCursor), p.Events, want)
	for _, e := range p.Events {
		if received[e.ID] {
			t.Fatalf("%s received event %d (%s) a second time", a.Name, e.Seq, e.Type)
		}
		received[e.ID] = true
	}
	return p.NextCursor, p.HeadSeq
}

// RandomReaction adds or takes back a random reaction of a random reader to a random posted
// message (deleted ones and those of direct messages included) and accepts every answer the
// contract allows: whether the reader may react there is for the API to decide, and the log
// records what it did.
func (w *SyncWorld) RandomReaction(t *testing.T, r *rand.Rand, posted []uuid.UUID, readers []Actor) {
	t.Helper()
	if len(posted) == 0 {
		return
	}
	a := Pick(r, readers)
	method := Pick(r, []string{http.MethodPut, http.MethodPut, http.MethodDelete})
	path := "/api/v1/messages/" + Pick(r, posted).String() + "/reactions/" + url.PathEscape(Pick(r, []string{":+1:", ":tada:", "\U0001F44D"}))
	switch res := w.Do(t, a, method, path, ""); res.Status {
	case http.StatusNoContent, http.StatusForbidden, http.StatusNotFound, http.StatusConflict:
	default:
		t.Fatalf("%s %s as %s = %d: %s", method, path, a.Name, res.Status, res.Body)
	}
}

// RandomRun starts a run of the agent for the owner in a random thread of a space, or moves
// one of its runs to a random state and now and then has the owner cancel it too; it returns
// the runs started so far. A move the state machine refuses answers 409 and appends nothing.
func (w *SyncWorld) RandomRun(t *testing.T, r *rand.Rand, m *ReadModel, agent Actor, runs []uuid.UUID) []uuid.UUID {
	t.Helper()
	if len(runs) == 0 || r.IntN(2) == 0 {
		ch := Pick(r, m.Channels)
		th := Pick(r, m.ThreadsOf[ch])
		if th == uuid.Nil || m.SpaceOf[ch] == uuid.Nil {
			return runs
		}
		var run apigen.Run
		w.Must(t, agent, http.MethodPost, "/api/v1/threads/"+th.String()+"/runs", `{"requested_by":"`+w.Owner.ID.String()+`"}`, http.StatusCreated, &run)
		return append(runs, run.Id)
	}
	run := Pick(r, runs)
	res := w.Do(t, agent, http.MethodPatch, "/api/v1/runs/"+run.String(), `{"state":"`+Pick(r, []string{"queued", "running", "succeeded", "failed", "cancelled"})+`","progress":"step"}`)
	if r.IntN(3) == 0 {
		res = w.Do(t, w.Owner, http.MethodPost, "/api/v1/runs/"+run.String()+"/cancel", "")
	}
	if res.Status != http.StatusOK && res.Status != http.StatusConflict {
		t.Fatalf("a run's change answered %d: %s", res.Status, res.Body)
	}
	return runs
}

// PropertySeed is the seed a property test runs with: set (the value of its -wire.*.seed flag,
// named name), or the clock's when set is 0; it is logged with the flag that replays it.
func PropertySeed(t *testing.T, name string, set uint64) uint64 {
	t.Helper()
	seed := set
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -%s=%d)", seed, name, seed)
	return seed
}
