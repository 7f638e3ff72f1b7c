package postgres_test

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/kernel/problem"
)

// TestUnreadMentionsInThreadsAgreeWithTheSnapshotCount: the thread list's mention count of a
// page of threads is, for each of them, the snapshot's count over the whole channel
// (CountUnreadMentions), with and without read positions and with a raised unread floor.
func TestUnreadMentionsInThreadsAgreeWithTheSnapshotCount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	sp := e.space(t, "Support")
	general := e.channel(t, sp.ID, "general")
	th1, _ := e.thread(t, general, sam) // seq 1 mentions sam
	th2, _ := e.thread(t, general)      // no mention
	th3, _ := e.thread(t, general, sam) // floor raised to 2 below
	th4, _ := e.thread(t, general, sam) // outside the page
	for _, th := range []uuid.UUID{th1.ID, th3.ID, th3.ID, th4.ID} {
		if _, err := e.post(ctx, th, alex, "@sam", "", sam); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.pool.Exec(ctx, `UPDATE chat.threads SET unread_floor_seq = 2 WHERE id = $1`, th3.ID); err != nil {
		t.Fatal(err)
	}
	page := []uuid.UUID{th1.ID, th2.ID, th3.ID}
	for _, reads := range []map[uuid.UUID]int64{
		nil,
		{th1.ID: 1},
		{th1.ID: 2, th3.ID: 1},
		{th3.ID: 3, th4.ID: 1},
	} {
		all, err := e.store.CountUnreadMentions(ctx, sam, []uuid.UUID{general.ID}, reads)
		if err != nil {
			t.Fatalf("CountUnreadMentions: %v", err)
		}
		want := map[uuid.UUID]int{}
		for _, id := range page {
			if n, ok := all[id]; ok {
				want[id] = n
			}
		}
		got, err := e.store.CountUnreadMentionsInThreads(ctx, sam, general.ID, page, reads)
		if err != nil {
			t.Fatalf("CountUnreadMentionsInThreads: %v", err)
		}
		if !maps.Equal(got, want) {
			t.Fatalf("reads %v: the page counts %v, the snapshot %v", reads, got, want)
		}
		if reads == nil && (want[th1.ID] != 2 || want[th3.ID] != 1) {
			t.Fatalf("the comparison proves little: %v", want)
		}
	}
}

// TestChannelThreadsOrderAndExcerpt: the channel comes with its page; threads come newest
// activity first, a post moves its thread up, pages continue after a position, the excerpt is
// cut to a number of characters, and a missing channel is problem.ErrNotFound.
func TestChannelThreadsOrderAndExcerpt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	sp := e.space(t, "Support")
	general := e.channel(t, sp.ID, "general")
	other := e.channel(t, sp.ID, "other")
	empty := e.channel(t, sp.ID, "empty")
	a, _ := e.thread(t, general)
	b, _ := e.thread(t, general)
	e.thread(t, other)
	page := func(ch uuid.UUID, after chat.ThreadPosition, limit int) (app.ChannelThreads, error) {
		return e.store.ChannelThreads(ctx, app.ChannelThreadsQuery{ChannelID: ch, Reader: sam, After: after, Limit: limit, ExcerptChars: 3})
	}
	// Both threads start at one time: the higher id comes first. Then a post of a later
	// time (the message insert moves last_message_at) puts the lower one on top.
	first, second := a, b
	if a.ID.String() < b.ID.String() {
		first, second = b, a
	}
	got, err := page(general.ID, chat.ThreadPosition{}, 10)
	list := got.Items
	if err != nil || got.Channel.ID != general.ID || got.Channel.SpaceID != sp.ID || len(list) != 2 || list[0].Thread.ID != first.ID || list[1].Thread.ID != second.ID {
		t.Fatalf("ChannelThreads = %+v, %v; want %s then %s in %s", got, err, first.ID, second.ID, general.ID)
	}
	if len(got.Mentions) != 2 || len(got.Mentions[0].Seqs) != 0 || !got.Mentions[0].Complete {
		t.Fatalf("mentions %+v, want none, complete, per thread", got.Mentions)
	}
	if list[0].FirstMessageExcerpt != "fir" || list[0].FirstMessageRedacted || !list[0].LastMessageAt.Equal(start) {
		t.Fatalf("item %+v, want the excerpt fir at %v", list[0], start)
	}
	if _, err := e.pool.Exec(ctx, `UPDATE chat.threads SET last_message_at = last_message_at + interval '1 minute' WHERE id = $1`, second.ID); err != nil {
		t.Fatal(err)
	}
	got, err = page(general.ID, chat.ThreadPosition{}, 1)
	if err != nil || len(got.Items) != 1 || got.Items[0].Thread.ID != second.ID {
		t.Fatalf("after activity: %+v, %v; want %s first", got.Items, err, second.ID)
	}
	rest, err := page(general.ID, got.Items[0].Position(), 10)
	if err != nil || len(rest.Items) != 1 || rest.Items[0].Thread.ID != first.ID {
		t.Fatalf("after the position: %+v, %v; want %s", rest.Items, err, first.ID)
	}
	if got, err := page(empty.ID, chat.ThreadPosition{}, 10); err != nil || got.Channel.ID != empty.ID || len(got.Items) != 0 || len(got.Mentions) != 0 {
		t.Fatalf("a channel without threads: %+v, %v", got, err)
	}
	if _, err := page(uuid.New(), chat.ThreadPosition{}, 10); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("a missing channel: %v, want problem.ErrNotFound", err)
	}
}

// TestChannelThreadsMentionSeqsAgreeWithTheSnapshotCount: the page's newest mention seqs of the
// reader, counted above a read position (and by CountUnreadMentionsInThreads where they stop
// above it), give every thread the snapshot's count (CountUnreadMentions) at every read
// position, for a thread with more mentions than the page carries, a raised floor, and
// mentions of someone else.
func TestChannelThreadsMentionSeqsAgreeWithTheSnapshotCount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	sp := e.space(t, "Support")
	general := e.channel(t, sp.ID, "general")
	many, _ := e.thread(t, general, sam)  // seq 1 mentions sam, then 40 more, then Robin
	floor, _ := e.thread(t, general, sam) // floor raised to 2 below
	quiet, _ := e.thread(t, general)      // no mention of sam
	const more = 40
	for range more {
		if _, err := e.post(ctx, many.ID, alex, "@sam", "", sam); err != nil {
			t.Fatal(err)
		}
	}
	for _, th := range []uuid.UUID{many.ID, floor.ID, floor.ID, quiet.ID} {
		if _, err := e.post(ctx, th, alex, "@robin", "", robin); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.post(ctx, floor.ID, alex, "@sam", "", sam); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, `UPDATE chat.threads SET unread_floor_seq = 2 WHERE id = $1`, floor.ID); err != nil {
		t.Fatal(err)
	}
	got, err := e.store.ChannelThreads(ctx, app.ChannelThreadsQuery{ChannelID: general.ID, Reader: sam, Limit: 10, ExcerptChars: 3})
	if err != nil || len(got.Items) != 3 {
		t.Fatalf("ChannelThreads = %+v, %v", got, err)
	}
	seqs := map[uuid.UUID]app.MentionSeqs{}
	for i, it := range got.Items {
		seqs[it.Thread.ID] = got.Mentions[i]
	}
	if m := seqs[many.ID]; m.Complete || len(m.Seqs) == 0 || m.Seqs[0] != more+1 || !slices.IsSortedFunc(m.Seqs, func(a, b int64) int { return int(b - a) }) {
		t.Fatalf("the often mentioned thread's seqs %+v: want the newest first, incomplete", m)
	}
	if m := seqs[floor.ID]; !m.Complete || !slices.Equal(m.Seqs, []int64{4}) {
		t.Fatalf("the floored thread's seqs %+v: want [4], complete (seq 1 is below the floor)", m)
	}
	if m := seqs[quiet.ID]; !m.Complete || len(m.Seqs) != 0 {
		t.Fatalf("the quiet thread's seqs %+v: want none", m)
	}
	fallbacks := 0
	for _, read := range []int64{0, 1, 2, 3, 4, 5, 9, 10, 20, 30, 40, 41, 42, 50} {
		reads := map[uuid.UUID]int64{many.ID: read, floor.ID: read, quiet.ID: read}
		want, err := e.store.CountUnreadMentions(ctx, sam, []uuid.UUID{general.ID}, reads)
		if err != nil {
			t.Fatalf("CountUnreadMentions: %v", err)
		}
		for id, m := range seqs {
			n, exact := m.CountAbove(read)
			if !exact {
				fallbacks++
				counted, err := e.store.CountUnreadMentionsInThreads(ctx, sam, general.ID, []uuid.UUID{id}, map[uuid.UUID]int64{id: read})
				if err != nil {
					t.Fatal(err)
				}
				n = counted[id]
			}
			if n != want[id] {
				t.Fatalf("read %d, thread %s: the page counts %d (exact %v), the snapshot %d", read, id, n, exact, want[id])
			}
		}
	}
	if fallbacks == 0 {
		t.Fatal("no read position needed the store's count: the comparison proves little")
	}
}
