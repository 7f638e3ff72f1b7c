package wire_test

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
)

var searchSeed = flag.Uint64("wire.search.seed", 0, "seed of TestSearchMessagesFindsWhatTheCallerMayRead (0: from the clock)")

// searchWorlds is how many random worlds TestSearchMessagesFindsWhatTheCallerMayRead builds:
// few enough for make test, each with its own database.
const searchWorlds = 4

// searchWords is the vocabulary of the property test's messages and queries: few words, so
// queries find many messages, in many channels.
var searchWords = []string{"anchor", "birch", "cedar", "delta", "ember"}

// searchedMessage is the test's account of one message: where it is and its current words.
type searchedMessage struct {
	channel uuid.UUID
	words   []string
	deleted bool
}

// TestSearchMessagesFindsWhatTheCallerMayRead is the search property test of issue 13. Over
// random worlds built through the API, with posts (in spaces and in direct messages), edits,
// deletes, new channels, grants and revokes interleaved, the owner, Alex, Sam and Robin search
// at random moments for one or two random words with a random page size, paging to the end:
// the hits are exactly the messages that are not deleted, whose current text has every word,
// and whose channel the test's model of spec 04 lets the searcher read at that moment, each
// once, in the search order. The seed is logged; -wire.search.seed replays it.
func TestSearchMessagesFindsWhatTheCallerMayRead(t *testing.T) {
	t.Parallel()
	seed := propertySeed(t, "wire.search.seed", *searchSeed)
	for i := range searchWorlds {
		t.Run(fmt.Sprintf("world %d", i), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, uint64(i))) //nolint:gosec // G404: reproducible test worlds, not secrets
			w := newSyncPeople(t)
			m := newReadModel(w.owner.id)
			people := []worldActor{w.alex, w.sam, w.robin}
			searchers := append(slices.Clone(people), w.owner)
			messages := map[uuid.UUID]*searchedMessage{}
			var inSpaces []uuid.UUID // messages the owner may edit and delete (not in a DM)
			text := func() []string {
				words := make([]string, 1+r.IntN(3))
				for j := range words {
					words[j] = pick(r, searchWords)
				}
				return words
			}
			record := func(id, ch uuid.UUID, words []string) {
				messages[id] = &searchedMessage{channel: ch, words: words}
				if m.spaceOf[ch] != uuid.Nil {
					inSpaces = append(inSpaces, id)
				}
			}
			check := func() {
				a := pick(r, searchers)
				query := []string{pick(r, searchWords)}
				if r.IntN(3) == 0 {
					query = append(query, pick(r, searchWords))
				}
				w.checkSearch(t, m, messages, a, query, 1+r.IntN(4))
			}

			// The first messages of randomStructure's threads hold no word of searchWords.
			w.randomStructure(t, r, m, people)
			for range 60 {
				switch op := r.IntN(10); {
				case op < 3:
					ch := pick(r, m.channels)
					th := pick(r, m.threadsOf[ch])
					if th == uuid.Nil || m.archived[ch] {
						continue
					}
					author := pick(r, []worldActor{w.owner, pick(r, people)})
					words := text()
					res := w.do(t, author, http.MethodPost, "/api/v1/threads/"+th.String()+"/messages", `{"content_md":"`+strings.Join(words, " ")+`"}`)
					switch res.Status {
					case http.StatusCreated:
						var msg apigen.Message
						res.JSON(t, &msg)
						record(msg.Id, ch, words)
					case http.StatusForbidden, http.StatusNotFound:
					default:
						t.Fatalf("postMessage as %s = %d: %s", author.name, res.Status, res.Body)
					}
				case op == 3:
					w.randomGrant(t, r, m, people)
				case op == 4:
					w.randomRevoke(t, r, m, people)
				case op == 5:
					if id := pick(r, inSpaces); id != uuid.Nil && !messages[id].deleted {
						words := text()
						w.must(t, w.owner, http.MethodPatch, "/api/v1/messages/"+id.String(), `{"content_md":"`+strings.Join(words, " ")+`"}`, http.StatusOK, nil)
						messages[id].words = words
					}
				case op == 6:
					if id := pick(r, inSpaces); id != uuid.Nil {
						w.must(t, w.owner, http.MethodDelete, "/api/v1/messages/"+id.String(), "", http.StatusNoContent, nil)
						messages[id].deleted = true
					}
				case op == 7:
					sp := pick(r, m.spaces)
					ch := w.channel(t, w.owner, sp, fmt.Sprintf("late-%d", len(m.channels)))
					m.addChannel(ch, sp)
					words := text()
					th := w.thread(t, w.owner, ch, strings.Join(words, " "))
					m.addThread(ch, th.Id)
					record(th.FirstMessage.Id, ch, words)
				case op == 8:
					a, b := pick(r, people), pick(r, searchers)
					if a.id == b.id {
						continue
					}
					dm := w.dm(t, a, b)
					if _, ok := m.spaceOf[dm]; !ok {
						m.addChannel(dm, uuid.Nil)
						m.addGrant(a.id, dm, uuid.Nil)
						m.addGrant(b.id, dm, uuid.Nil)
						words := text()
						th := w.thread(t, a, dm, strings.Join(words, " "))
						m.addThread(dm, th.Id)
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
					w.checkSearch(t, m, messages, a, []string{word}, 1+r.IntN(4))
				}
			}
		})
	}
}

// checkSearch pages through the search for the words as a with pages of limit and fails the
// test unless the hits are exactly the messages the model says a may read now and whose text
// has every word.
func (w *syncWorld) checkSearch(t *testing.T, m *readModel, messages map[uuid.UUID]*searchedMessage, a worldActor, words []string, limit int) {
	t.Helper()
	var want []uuid.UUID
	for id, msg := range messages {
		has := true
		for _, word := range words {
			has = has && slices.Contains(msg.words, word)
		}
		if has && !msg.deleted && m.readsChannel(a.id, msg.channel) {
			want = append(want, id)
		}
	}
	hits := w.searchAll(t, a, limit, "q", strings.Join(words, " "))
	for _, h := range hits {
		msg, ok := messages[h.Message.Id]
		switch {
		case !ok:
			t.Fatalf("%s searching %v finds %s, which the test did not post with these words", a.name, words, h.Message.Id)
		case !m.readsChannel(a.id, msg.channel):
			t.Fatalf("%s searching %v finds %s of channel %s, which %s cannot read", a.name, words, h.Message.Id, msg.channel, a.name)
		case msg.deleted:
			t.Fatalf("%s searching %v finds the deleted message %s", a.name, words, h.Message.Id)
		}
	}
	if got := hitIDs(hits); !sameIDs(got, want) {
		t.Fatalf("%s searching %v with pages of %d finds %v, want %v", a.name, words, limit, got, want)
	}
}
