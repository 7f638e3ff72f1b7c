package catchup

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
	syncapp "bothy.example.com/server/internal/sync/app"
	syncdomain "bothy.example.com/server/internal/sync/domain"
	"bothy.example.com/server/internal/wiretest"
)

var catchUpSeed = flag.Uint64("wire.catchup.seed", 0, "seed of TestListEventsDeliversWhatAuthorizeAllows (0: from the clock)")

// catchUpWorlds is how many random worlds TestListEventsDeliversWhatAuthorizeAllows builds:
// few enough for make test, each with its own database.
const catchUpWorlds = 6

// TestListEventsDeliversWhatAuthorizeAllows is the catch-up property test (spec 03). Over
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
	seed := e2etest.PropertySeed(t, "wire.catchup.seed", *catchUpSeed)
	for i := range catchUpWorlds {
		t.Run(fmt.Sprintf("world %d", i), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, uint64(i))) //nolint:gosec // G404: reproducible test worlds, not secrets
			window := e2etest.Pick(r, []int{3, 8, 5000})
			w := e2etest.NewSyncPeople(t, wiretest.WithSetting(syncapp.KeyCatchUpScanWindow, fmt.Sprint(window)))
			m := e2etest.NewReadModel(w.Owner.ID)
			people := []e2etest.Actor{w.Alex, w.Sam, w.Robin}
			readers := append(slices.Clone(people), w.Owner)
			cursors := map[uuid.UUID]int64{}
			received := map[uuid.UUID]map[uuid.UUID]bool{}
			for _, a := range readers {
				received[a.ID] = map[uuid.UUID]bool{}
			}
			pageOnce := func(a e2etest.Actor) int64 {
				next, head := w.CheckedPage(t, m, a, cursors[a.ID], e2etest.Pick(r, []int{0, 1, 2, 3, 5}), received[a.ID])
				cursors[a.ID] = next
				return head
			}
			var messages, posted []uuid.UUID

			w.RandomStructure(t, r, m, people)
			// Runner, an agent with member on the instance, works in any thread of a space for
			// the owner: its run.* events are thread events, which the model decides like
			// messages.
			runner := w.Agent(t, "Runner", "runner")
			var inst apigen.InstanceInfo
			w.Must(t, w.Owner, http.MethodGet, "/api/v1/instance", "", http.StatusOK, &inst)
			w.Grant(t, runner, "instance", inst.Id, "member")
			var runs []uuid.UUID
			for range 70 {
				switch op := r.IntN(12); {
				case op < 3:
					ch := e2etest.Pick(r, m.Channels)
					th := e2etest.Pick(r, m.ThreadsOf[ch])
					if th == uuid.Nil || m.Archived[ch] {
						continue
					}
					// The owner posts anywhere; a person where a grant lets them (else 403 or 404).
					author := e2etest.Pick(r, []e2etest.Actor{w.Owner, w.Owner, e2etest.Pick(r, people)})
					res := w.Do(t, author, http.MethodPost, "/api/v1/threads/"+th.String()+"/messages", `{"content_md":"@`+e2etest.Pick(r, []string{"alex", "sam", "robin"})+` news"}`)
					switch res.Status {
					case http.StatusCreated:
						var msg apigen.Message
						res.JSON(t, &msg)
						posted = append(posted, msg.Id)
						// The owner deletes only outside direct messages: a DM is private to
						// its participants (spec 04), so the owner gets 404 in one.
						if m.SpaceOf[ch] != uuid.Nil {
							messages = append(messages, msg.Id)
						}
					case http.StatusForbidden, http.StatusNotFound:
					default:
						t.Fatalf("postMessage as %s = %d: %s", author.Name, res.Status, res.Body)
					}
				case op == 3:
					w.RandomGrant(t, r, m, people)
				case op == 4:
					w.RandomRevoke(t, r, m, people)
				case op == 5:
					w.RandomWrite(t, r, m, e2etest.Pick(r, people))
				case op == 6:
					sp := e2etest.Pick(r, m.Spaces)
					ch := w.Channel(t, w.Owner, sp, fmt.Sprintf("late-%d", len(m.Channels)))
					m.AddChannel(ch, sp)
					m.AddThread(ch, w.Thread(t, w.Owner, ch, "A new channel").Id)
				case op == 7:
					if len(messages) > 0 {
						w.Must(t, w.Owner, http.MethodDelete, "/api/v1/messages/"+e2etest.Pick(r, messages).String(), "", http.StatusNoContent, nil)
					}
				case op == 8:
					a, b := e2etest.Pick(r, people), e2etest.Pick(r, readers)
					if a.ID != b.ID {
						dm := w.DM(t, a, b)
						if _, ok := m.SpaceOf[dm]; !ok {
							m.AddChannel(dm, uuid.Nil)
							m.AddGrant(a.ID, dm, uuid.Nil)
							m.AddGrant(b.ID, dm, uuid.Nil)
							m.AddThread(dm, w.Thread(t, a, dm, "Hello").Id)
						}
					}
				case op == 9:
					w.RandomReaction(t, r, posted, readers)
				case op == 10:
					runs = w.RandomRun(t, r, m, runner, runs)
				default:
					pageOnce(e2etest.Pick(r, readers))
				}
				if r.IntN(3) == 0 {
					pageOnce(e2etest.Pick(r, readers))
				}
			}

			// Every reader pages on to the head with random page sizes.
			for _, a := range readers {
				for pages := 0; ; pages++ {
					if pages > 10000 {
						t.Fatalf("%s did not reach the head", a.Name)
					}
					if head := pageOnce(a); cursors[a.ID] == head {
						break
					}
				}
			}
			// And from the start, once more, with one page size: what the final permissions
			// allow, whole.
			log := w.EventsAfter(t, 0)
			for _, a := range readers {
				got, _ := w.CatchUp(t, a, 0, e2etest.Pick(r, []int{0, 1, 4, 7}))
				e2etest.RequireSameEvents(t, a.Name+" from 0", got, e2etest.StoredWhere(log, func(e syncdomain.StoredEvent) bool { return m.Receives(a.ID, e) }))
			}
		})
	}
}
