package e2etest

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// SearchedMessage is the test's account of one message: where it is and its current words.
type SearchedMessage struct {
	Channel uuid.UUID
	Words   []string
	Deleted bool
}

// CheckSearch pages through the search for the words as a with pages of limit and fails the
// test unless the hits are exactly the messages the model says a may read now and whose text
// has every word.
func (w *SyncWorld) CheckSearch(t *testing.T, m *ReadModel, messages map[uuid.UUID]*SearchedMessage, a Actor, words []string, limit int) {
	t.Helper()
	var want []uuid.UUID
	for id, msg := range messages {
		has := true
		for _, word := range words {
			has = has && slices.Contains(msg.Words, word)
		}
		if has && !msg.Deleted && m.readsChannel(a.ID, msg.Channel) {
			want = append(want, id)
		}
	}
	hits := w.SearchAll(t, a, limit, "q", strings.Join(words, " "))
	for _, h := range hits {
		msg, ok := messages[h.Message.Id]
		switch {
		case !ok:
			t.Fatalf("%s searching %v finds %s, which the test did not post with these words", a.Name, words, h.Message.Id)
		case !m.readsChannel(a.ID, msg.Channel):
			t.Fatalf("%s searching %v finds %s of channel %s, which %s cannot read", a.Name, words, h.Message.Id, msg.Channel, a.Name)
		case msg.Deleted:
			t.Fatalf("%s searching %v finds the deleted message %s", a.Name, words, h.Message.Id)
		}
	}
	if got := HitIDs(hits); !SameIDs(got, want) {
		t.Fatalf("%s searching %v with pages of %d finds %v, want %v", a.Name, words, limit, got, want)
	}
}
