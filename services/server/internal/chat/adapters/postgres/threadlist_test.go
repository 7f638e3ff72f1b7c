package postgres_test

import (
	"maps"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
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

// TestThreadsOfChannelOrderAndExcerpt: threads come newest activity first, a post moves its
// thread up, pages continue after a position, and the excerpt is cut to a number of characters.
func TestThreadsOfChannelOrderAndExcerpt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	sp := e.space(t, "Support")
	general := e.channel(t, sp.ID, "general")
	other := e.channel(t, sp.ID, "other")
	a, _ := e.thread(t, general)
	b, _ := e.thread(t, general)
	e.thread(t, other)
	// Both threads start at one time: the higher id comes first. Then a post of a later
	// time (the message insert moves last_message_at) puts the lower one on top.
	first, second := a, b
	if a.ID.String() < b.ID.String() {
		first, second = b, a
	}
	list, err := e.store.ThreadsOfChannel(ctx, general.ID, chat.ThreadPosition{}, 10, 3)
	if err != nil || len(list) != 2 || list[0].Thread.ID != first.ID || list[1].Thread.ID != second.ID {
		t.Fatalf("ThreadsOfChannel = %+v, %v; want %s then %s", list, err, first.ID, second.ID)
	}
	if list[0].FirstMessageExcerpt != "fir" || list[0].FirstMessageRedacted || !list[0].LastMessageAt.Equal(start) {
		t.Fatalf("item %+v, want the excerpt fir at %v", list[0], start)
	}
	if _, err := e.pool.Exec(ctx, `UPDATE chat.threads SET last_message_at = last_message_at + interval '1 minute' WHERE id = $1`, second.ID); err != nil {
		t.Fatal(err)
	}
	list, err = e.store.ThreadsOfChannel(ctx, general.ID, chat.ThreadPosition{}, 1, 3)
	if err != nil || len(list) != 1 || list[0].Thread.ID != second.ID {
		t.Fatalf("after activity: %+v, %v; want %s first", list, err, second.ID)
	}
	rest, err := e.store.ThreadsOfChannel(ctx, general.ID, list[0].Position(), 10, 3)
	if err != nil || len(rest) != 1 || rest[0].Thread.ID != first.ID {
		t.Fatalf("after the position: %+v, %v; want %s", rest, err, first.ID)
	}
}
