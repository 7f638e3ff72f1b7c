package search

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
)

var searchSeed = flag.Uint64("wire.search.seed", 0, "seed of TestSearchMessagesFindsWhatTheCallerMayRead (0: from the clock)")

// searchWorlds is how many random worlds TestSearchMessagesFindsWhatTheCallerMayRead builds:
// few enough for make test, each with its own database.
const searchWorlds = 4

// searchWords is the vocabulary of the property test's messages and queries: few words, so
// queries find many messages, in many channels.
var searchWords = []string{"anchor", "birch", "cedar", "delta", "ember"}

// TestSearchMessagesFindsWhatTheCallerMayRead is the search property test (ADR 0024). Over
// random worlds built through the API, with posts (in spaces and in direct messages), edits,
// deletes, new channels, grants and revokes interleaved, the owner, Alex, Sam and Robin search
// at random moments for one or two random words with a random page size, paging to the end:
// the hits are exactly the messages that are not deleted, whose current text has every word,
// and whose channel the test's model of spec 04 lets the searcher read at that moment, each
// once, in the search order. The seed is logged; -wire.search.seed replays it.
func TestSearchMessagesFindsWhatTheCallerMayRead(t *testing.T) {
	t.Parallel()
	seed := e2etest.PropertySeed(t, "wire.search.seed", *searchSeed)
	for i := range searchWorlds {
		t.Run(fmt.Sprintf("world %d", i), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, uint64(i))) //nolint:gosec // G404: reproducible test worlds, not secrets
			w := e2etest.NewSyncPeople(t)
			m := e2etest.NewReadModel(w.Owner.ID)
			people := []e2etest.Actor{w.Alex, w.Sam, w.Robin}
			searchers := append(slices.Clone(people), w.Owner)
			messages := map[uuid.UUID]*e2etest.SearchedMessage{}
			var inSpaces []uuid.UUID // messages the owner may edit and delete (not in a DM)
			text := func() []string {
				words := make([]string, 1+r.IntN(3))
				for j := range words {
					words[j] = e2etest.Pick(r, searchWords)
				}
				return words
			}
			record := func(id, ch uuid.UUID, words []string) {
				messages[id] = &e2etest.SearchedMessage{Channel: ch, Words: words}
				if m.SpaceOf[ch] != uuid.Nil {
					inSpaces = append(inSpaces, id)
				}
			}
			check := func() {
				a := e2etest.Pick(r, searchers)
				query := []string{e2etest.Pick(r, searchWords)}
				if r.IntN(3) == 0 {
					query = append(query, e2etest.Pick(r, searchWords))
				}
				w.CheckSearch(t, m, messages, a, query, 1+r.IntN(4))
			}

			// The first messages of RandomStructure's threads hold no word of searchWords.
			w.RandomStructure(t, r, m, people)
			for range 60 {
				switch op := r.IntN(10); {
				case op < 3:
					ch := e2etest.Pick(r, m.Channels)
					th := e2etest.Pick(r, m.ThreadsOf[ch])
					if th == uuid.Nil || m.Archived[ch] {
						continue
					}
					author := e2etest.Pick(r, []e2etest.Actor{w.Owner, e2etest.Pick(r, people)})
					words := text()
					res := w.Do(t, author, http.MethodPost, "/api/v1/threads/"+th.String()+"/messages", `{"content_md":"`+strings.Join(words, " ")+`"}`)
					switch res.Status {
					case http.StatusCreated:
						var msg apigen.Message
						res.JSON(t, &msg)
						record(msg.Id, ch, words)
					case http.StatusForbidden, http.StatusNotFound:
					default:
						t.Fatalf("postMessage as %s = %d: %s", author.Name, res.Status, res.Body)
					}
				case op == 3:
					w.RandomGrant(t, r, m, people)
				case op == 4:
					w.RandomRevoke(t, r, m, people)
				case op == 5:
					if id := e2etest.Pick(r, inSpaces); id != uuid.Nil && !messages[id].Deleted {
						words := text()
						w.Must(t, w.Owner, http.MethodPatch, "/api/v1/messages/"+id.String(), `{"content_md":"`+strings.Join(words, " ")+`"}`, http.StatusOK, nil)
						messages[id].Words = words
					}
				case op == 6:
					if id := e2etest.Pick(r, inSpaces); id != uuid.Nil {
						w.Must(t, w.Owner, http.MethodDelete, "/api/v1/messages/"+id.String(), "", http.StatusNoContent, nil)
						messages[id].Deleted = true
					}
				case op == 7:
					sp := e2etest.Pick(r, m.Spaces)
					ch := w.Channel(t, w.Owner, sp, fmt.Sprintf("late-%d", len(m.Channels)))
					m.AddChannel(ch, sp)
					words := text()
					th := w.Thread(t, w.Owner, ch, strings.Join(words, " "))
					m.AddThread(ch, th.Id)
					record(th.FirstMessage.Id, ch, words)
				case op == 8:
					a, b := e2etest.Pick(r, people), e2etest.Pick(r, searchers)
					if a.ID == b.ID {
						continue
					}
					dm := w.DM(t, a, b)
					if _, ok := m.SpaceOf[dm]; !ok {
						m.AddChannel(dm, uuid.Nil)
						m.AddGrant(a.ID, dm, uuid.Nil)
						m.AddGrant(b.ID, dm, uuid.Nil)
						words := text()
						th := w.Thread(t, a, dm, strings.Join(words, " "))
						m.AddThread(dm, th.Id)
						record(th.FirstMessage.Id, dm, words)
					}
				default:
					check()
				}
				if r.IntN(3) == 0 {
					check()
				}
			}
			for _, a := range searchers {
				for _, word := range searchWords {
					w.CheckSearch(t, m, messages, a, []string{word}, 1+r.IntN(4))
				}
			}
		})
	}
}
