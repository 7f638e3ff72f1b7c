package catchup

import (
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/kernel"
	syncdomain "bothy.example.com/server/internal/sync/domain"
)

// unreadOf returns the thread's entry of the snapshot's unread threads, and whether it has
// one (a thread with nothing unread and no unread mention has none).
func unreadOf(s apigen.Snapshot, thread uuid.UUID) (apigen.UnreadThread, bool) {
	for _, u := range s.UnreadThreads {
		if u.ThreadId == thread {
			return u, true
		}
	}
	return apigen.UnreadThread{}, false
}

// readStateEvents returns the read_state.updated events among events.
func readStateEvents(events []syncdomain.StoredEvent) []syncdomain.StoredEvent {
	var out []syncdomain.StoredEvent
	for _, e := range events {
		if e.Type == "read_state.updated" {
			out = append(out, e)
		}
	}
	return out
}

// TestOwnPostsAreRead: posting a message and starting a thread move the author's read state of
// the thread to the new message in the transaction of the post, with the author's
// read_state.updated, which reaches the author only; the other readers' unread counts rise.
// Sam's own message mentioning him leaves no unread mention. An agent posting follows the
// same rule.
func TestOwnPostsAreRead(t *testing.T) {
	t.Parallel()
	w := e2etest.NewSyncWorld(t)
	w.Grant(t, w.Robin, "space", w.Marketing, "member")

	// Robin starts a thread: his own first message is read.
	start := w.Head(t)
	h := start
	th := w.Thread(t, w.Robin, w.Campaigns, "Banner drafts are in the shared folder")
	got := w.EventsAfter(t, h)
	if len(got) != 3 || got[0].Type != "thread.created" || got[1].Type != "message.created" || got[2].Type != "read_state.updated" {
		t.Fatalf("createThread appended %s, want thread.created, message.created, read_state.updated", e2etest.Describe(got))
	}
	requireOwnRead(t, got[2], w.Robin.ID, w.Marketing, w.Campaigns, th.Id)
	e2etest.RequirePayload(t, got[2], map[string]any{"thread_id": th.Id.String(), "channel_id": w.Campaigns.String(), "last_read_seq": 1, "version": 1})
	robinRead := got[2].Seq
	robinSnap, _ := w.Snapshot(t, w.Robin)
	if u, ok := unreadOf(robinSnap, th.Id); ok {
		t.Errorf("Robin's own thread is unread in his snapshot: %+v", u)
	}
	samSnap, _ := w.Snapshot(t, w.Sam)
	if u, ok := unreadOf(samSnap, th.Id); !ok || u.UnreadCount != 1 || u.LastReadSeq != 0 {
		t.Errorf("Sam's unread of Robin's thread = %+v (listed %v), want 1 unread", u, ok)
	}

	// Sam replies, mentioning himself: read up to his message, nothing unread, no mention.
	h = w.Head(t)
	reply := w.Post(t, w.Sam, th.Id, "Thanks Robin, @sam will review them")
	got = w.EventsAfter(t, h)
	if len(got) != 2 || got[0].Type != "message.created" || got[1].Type != "read_state.updated" {
		t.Fatalf("postMessage appended %s, want message.created, read_state.updated", e2etest.Describe(got))
	}
	if got[0].CorrelationID != got[1].CorrelationID {
		t.Errorf("the read state was not appended by the post's request: %q and %q", got[0].CorrelationID, got[1].CorrelationID)
	}
	requireOwnRead(t, got[1], w.Sam.ID, w.Marketing, w.Campaigns, th.Id)
	e2etest.RequirePayload(t, got[1], map[string]any{"thread_id": th.Id.String(), "channel_id": w.Campaigns.String(), "last_read_seq": reply.Seq, "version": 1})
	samRead := got[1].Seq
	samSnap, _ = w.Snapshot(t, w.Sam)
	if u, ok := unreadOf(samSnap, th.Id); ok {
		t.Errorf("Sam's unread of the thread he replied to = %+v, want none", u)
	}
	robinSnap, _ = w.Snapshot(t, w.Robin)
	if u, ok := unreadOf(robinSnap, th.Id); !ok || u.UnreadCount != 1 || u.LastReadSeq != 1 || u.LastMessageSeq != 2 {
		t.Errorf("Robin's unread of the thread = %+v (listed %v), want 1 unread after his seq 1", u, ok)
	}

	// The read states reached their owners only: catch-up from before the thread.
	own := map[uuid.UUID]int64{w.Sam.ID: samRead, w.Robin.ID: robinRead}
	for _, a := range []e2etest.Actor{w.Sam, w.Robin, w.Alex, w.Owner} {
		events, _ := w.CatchUp(t, a, start, 0)
		var reads []int64
		for _, e := range events {
			if e.Type == "read_state.updated" {
				reads = append(reads, e.Seq)
			}
		}
		want, mine := own[a.ID]
		if (mine && (len(reads) != 1 || reads[0] != want)) || (!mine && len(reads) != 0) {
			t.Errorf("%s received read states at seqs %v (own: %d)", a.Name, reads, want)
		}
	}
	samEvents, _ := w.CatchUp(t, w.Sam, h, 0)
	if len(samEvents) != 2 || samEvents[1].Type != "read_state.updated" {
		t.Errorf("Sam's catch-up after his post = %+v, want his message and his read state", samEvents)
	}

	// A later read state of Sam's own choosing still wins: he marks the thread unread again.
	w.ReadTo(t, w.Sam, th.Id, 1)
	samSnap, _ = w.Snapshot(t, w.Sam)
	if u, ok := unreadOf(samSnap, th.Id); !ok || u.UnreadCount != 1 {
		t.Errorf("after marking it unread Sam's unread = %+v (listed %v), want 1", u, ok)
	}

	// An agent's post follows the same rule.
	helper := w.Agent(t, "Helper", "helper")
	w.Grant(t, helper, "space", w.Marketing, "member")
	h = w.Head(t)
	w.Post(t, helper, th.Id, "Summary: the banners are ready for review.")
	rs := readStateEvents(w.EventsAfter(t, h))
	if len(rs) != 1 {
		t.Fatalf("the agent's post appended %d read states, want 1", len(rs))
	}
	requireOwnRead(t, rs[0], helper.ID, w.Marketing, w.Campaigns, th.Id)
}

// requireOwnRead checks that e is the read_state.updated of the author's own post: on the
// thread, by and for the author only.
func requireOwnRead(t *testing.T, e syncdomain.StoredEvent, author, space, channel, thread uuid.UUID) {
	t.Helper()
	if e.Type != "read_state.updated" || e.ActorID != author || e.AudienceID != author || !e.Personal() ||
		e.ResourceKind != kernel.ResourceThread || e.ResourceID != thread || e.ThreadID != thread ||
		e.ChannelID != channel || e.SpaceID != space {
		t.Fatalf("read state event %+v, want one on thread %s by and for %s", e, thread, author)
	}
}

// TestOwnPostInDirectMessage: the rule holds in a direct message, which lies in no space.
func TestOwnPostInDirectMessage(t *testing.T) {
	t.Parallel()
	w := e2etest.NewSyncWorld(t)
	dm := w.DM(t, w.Alex, w.Sam)
	h := w.Head(t)
	th := w.Thread(t, w.Alex, dm, "Lunch at noon?")
	rs := readStateEvents(w.EventsAfter(t, h))
	if len(rs) != 1 {
		t.Fatalf("createThread in a direct message appended %d read states, want 1", len(rs))
	}
	requireOwnRead(t, rs[0], w.Alex.ID, uuid.Nil, dm, th.Id)
	alexSnap, _ := w.Snapshot(t, w.Alex)
	if u, ok := unreadOf(alexSnap, th.Id); ok {
		t.Errorf("Alex's own direct message is unread: %+v", u)
	}
	samSnap, _ := w.Snapshot(t, w.Sam)
	if u, ok := unreadOf(samSnap, th.Id); !ok || u.UnreadCount != 1 {
		t.Errorf("Sam's unread of Alex's direct message = %+v (listed %v), want 1", u, ok)
	}
}
