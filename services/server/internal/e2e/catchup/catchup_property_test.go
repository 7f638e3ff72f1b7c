package wire_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	syncapp "bothy.example.com/server/internal/sync/app"
	syncdomain "bothy.example.com/server/internal/sync/domain"
	"bothy.example.com/server/internal/wire/wiretest"
)

var catchUpSeed = flag.Uint64("wire.catchup.seed", 0, "seed of TestListEventsDeliversWhatAuthorizeAllows (0: from the clock)")

// catchUpWorlds is how many random worlds TestListEventsDeliversWhatAuthorizeAllows builds:
// few enough for make test, each with its own database.
const catchUpWorlds = 6

// TestListEventsDeliversWhatAuthorizeAllows is the catch-up property test of issue 6. Over
// random worlds built through the API, with posts, new channels, direct messages, deleted
// messages, reactions, personal data, grants and revokes and an agent's runs (ADR 0027) interleaved, the owner, Alex, Sam and Robin
// page at random moments with random page sizes (and a random sync.catchup_scan_window, so
// pages also end short at the window): every page delivers exactly the events of the range it
// checked (after, next_cursor] that the test's model of spec 04 lets the reader see at
// delivery time, in seq order, with no gap and no duplicate. At the end each reader catches up
// to the head, and from 0 again, and receives exactly what the final permissions allow. The
// seed is logged; -wire.catchup.seed replays it.
func TestListEventsDeliversWhatAuthorizeAllows(t *testing.T) {
	t.Parallel()
	seed := propertySeed(t, "wire.catchup.seed", *catchUpSeed)
	for i := range catchUpWorlds {
		t.Run(fmt.Sprintf("world %d", i), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, uint64(i))) //nolint:gosec // G404: reproducible test worlds, not secrets
			window := pick(r, []int{3, 8, 5000})
			w := newSyncPeople(t, wiretest.WithSetting(syncapp.KeyCatchUpScanWindow, fmt.Sprint(window)))
			m := newReadModel(w.owner.id)
			people := []worldActor{w.alex, w.sam, w.robin}
			readers := append(slices.Clone(people), w.owner)
			cursors := map[uuid.UUID]int64{}
			received := map[uuid.UUID]map[uuid.UUID]bool{}
			for _, a := range readers {
				received[a.id] = map[uuid.UUID]bool{}
			}
			pageOnce := func(a worldActor) int64 {
				next, head := w.checkedPage(t, m, a, cursors[a.id], pick(r, []int{0, 1, 2, 3, 5}), received[a.id])
				cursors[a.id] = next
				return head
			}
			var messages, posted []uuid.UUID

			w.randomStructure(t, r, m, people)
			// Runner, an agent with member on the instance, works in any thread of a space for
			// the owner: its run.* events are thread events, which the model decides like
			// messages.
			runner := w.agent(t, "Runner", "runner")
			var inst apigen.InstanceInfo
			w.must(t, w.owner, http.MethodGet, "/api/v1/instance", "", http.StatusOK, &inst)
			w.grant(t, runner, "instance", inst.Id, "member")
			var runs []uuid.UUID
			for range 70 {
				switch op := r.IntN(12); {
				case op < 3:
					ch := pick(r, m.channels)
					th := pick(r, m.threadsOf[ch])
					if th == uuid.Nil || m.archived[ch] {
						continue
					}
					// The owner posts anywhere; a person where a grant lets them (else 403 or 404).
					author := pick(r, []worldActor{w.owner, w.owner, pick(r, people)})
					res := w.do(t, author, http.MethodPost, "/api/v1/threads/"+th.String()+"/messages", `{"content_md":"@`+pick(r, []string{"alex", "sam", "robin"})+` news"}`)
					switch res.Status {
					case http.StatusCreated:
						var msg apigen.Message
						res.JSON(t, &msg)
						posted = append(posted, msg.Id)
						// The owner deletes only outside direct messages: a DM is private to
						// its participants (spec 04), so the owner gets 404 in one.
						if m.spaceOf[ch] != uuid.Nil {
							messages = append(messages, msg.Id)
						}
					case http.StatusForbidden, http.StatusNotFound:
					default:
						t.Fatalf("postMessage as %s = %d: %s", author.name, res.Status, res.Body)
					}
				case op == 3:
					w.randomGrant(t, r, m, people)
				case op == 4:
					w.randomRevoke(t, r, m, people)
				case op == 5:
					w.randomWrite(t, r, m, pick(r, people))
				case op == 6:
					sp := pick(r, m.spaces)
					ch := w.channel(t, w.owner, sp, fmt.Sprintf("late-%d", len(m.channels)))
					m.addChannel(ch, sp)
					m.addThread(ch, w.thread(t, w.owner, ch, "A new channel").Id)
				case op == 7:
					if len(messages) > 0 {
						w.must(t, w.owner, http.MethodDelete, "/api/v1/messages/"+pick(r, messages).String(), "", http.StatusNoContent, nil)
					}
				case op == 8:
					a, b := pick(r, people), pick(r, readers)
					if a.id != b.id {
						dm := w.dm(t, a, b)
						if _, ok := m.spaceOf[dm]; !ok {
							m.addChannel(dm, uuid.Nil)
							m.addGrant(a.id, dm, uuid.Nil)
							m.addGrant(b.id, dm, uuid.Nil)
							m.addThread(dm, w.thread(t, a, dm, "Hello").Id)
						}
					}
				case op == 9:
					w.randomReaction(t, r, posted, readers)
				case op == 10:
					runs = w.randomRun(t, r, m, runner, runs)
				default:
					pageOnce(pick(r, readers))
				}
				if r.IntN(3) == 0 {
					pageOnce(pick(r, readers))
				}
			}

			// Every reader pages on to the head with random page sizes.
			for _, a := range readers {
				for pages := 0; ; pages++ {
					if pages > 10000 {
						t.Fatalf("%s did not reach the head", a.name)
					}
					if head := pageOnce(a); cursors[a.id] == head {
						break
					}
				}
			}
			// And from the start, once more, with one page size: what the final permissions
			// allow, whole.
			log := w.eventsAfter(t, 0)
			for _, a := range readers {
				got, _ := w.catchUp(t, a, 0, pick(r, []int{0, 1, 4, 7}))
				requireSameEvents(t, a.name+" from 0", got, storedWhere(log, func(e syncdomain.StoredEvent) bool { return m.receives(a.id, e) }))
			}
		})
	}
}

// checkedPage reads one page as a after the cursor and fails unless it delivers exactly the
// events of (after, next_cursor] the model lets a receive now, none of them delivered to a
// before. It returns next_cursor and head_seq.
func (w *syncWorld) checkedPage(t *testing.T, m *readModel, a worldActor, after int64, limit int, received map[uuid.UUID]bool) (int64, int64) {
	t.Helper()
	p := w.page(t, a, after, limit)
	var want []syncdomain.StoredEvent
	for _, e := range w.eventsAfter(t, after) {
		if e.Seq > p.NextCursor {
			break
		}
		if m.receives(a.id, e) {
			want = append(want, e)
		}
	}
	requireSameEvents(t, fmt.Sprintf("%s's page after %d (limit %d, next_cursor %d)", a.name, after, limit, p.NextCursor), p.Events, want)
	for _, e := range p.Events {
		if received[e.ID] {
			t.Fatalf("%s received event %d (%s) a second time", a.name, e.Seq, e.Type)
		}
		received[e.ID] = true
	}
	return p.NextCursor, p.HeadSeq
}

// randomReaction adds or takes back a random reaction of a random reader to a random posted
// message (deleted ones and those of direct messages included) and accepts every answer the
// contract allows: whether the reader may react there is for the API to decide, and the log
// records what it did.
func (w *syncWorld) randomReaction(t *testing.T, r *rand.Rand, posted []uuid.UUID, readers []worldActor) {
	t.Helper()
	if len(posted) == 0 {
		return
	}
	a := pick(r, readers)
	method := pick(r, []string{http.MethodPut, http.MethodPut, http.MethodDelete})
	path := "/api/v1/messages/" + pick(r, posted).String() + "/reactions/" + url.PathEscape(pick(r, []string{":+1:", ":tada:", "\U0001F44D"}))
	switch res := w.do(t, a, method, path, ""); res.Status {
	case http.StatusNoContent, http.StatusForbidden, http.StatusNotFound, http.StatusConflict:
	default:
		t.Fatalf("%s %s as %s = %d: %s", method, path, a.name, res.Status, res.Body)
	}
}

// randomRun starts a run of the agent for the owner in a random thread of a space, or moves
// one of its runs to a random state and now and then has the owner cancel it too; it returns
// the runs started so far. A move the state machine refuses answers 409 and appends nothing.
func (w *syncWorld) randomRun(t *testing.T, r *rand.Rand, m *readModel, agent worldActor, runs []uuid.UUID) []uuid.UUID {
	t.Helper()
	if len(runs) == 0 || r.IntN(2) == 0 {
		ch := pick(r, m.channels)
		th := pick(r, m.threadsOf[ch])
		if th == uuid.Nil || m.spaceOf[ch] == uuid.Nil {
			return runs
		}
		var run apigen.Run
		w.must(t, agent, http.MethodPost, "/api/v1/threads/"+th.String()+"/runs", `{"requested_by":"`+w.owner.id.String()+`"}`, http.StatusCreated, &run)
		return append(runs, run.Id)
	}
	run := pick(r, runs)
	res := w.do(t, agent, http.MethodPatch, "/api/v1/runs/"+run.String(), `{"state":"`+pick(r, []string{"queued", "running", "succeeded", "failed", "cancelled"})+`","progress":"step"}`)
	if r.IntN(3) == 0 {
		res = w.do(t, w.owner, http.MethodPost, "/api/v1/runs/"+run.String()+"/cancel", "")
	}
	if res.Status != http.StatusOK && res.Status != http.StatusConflict {
		t.Fatalf("a run's change answered %d: %s", res.Status, res.Body)
	}
	return runs
}

// propertySeed is the seed a property test runs with: set (the value of its -wire.*.seed flag,
// named name), or the clock's when set is 0; it is logged with the flag that replays it.
func propertySeed(t *testing.T, name string, set uint64) uint64 {
	t.Helper()
	seed := set
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -%s=%d)", seed, name, seed)
	return seed
}
