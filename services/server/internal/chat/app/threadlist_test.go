package app_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

// tlStore is a hand-written ThreadListStore: one channel, a fixed list of summaries (already
// in activity order) with the reader's newest mention seqs per thread, and the counts its
// CountUnreadMentionsInThreads gives; it records the calls.
type tlStore struct {
	channel  chat.Channel
	items    []chat.ThreadSummary
	seqs     map[uuid.UUID]app.MentionSeqs
	mentions map[uuid.UUID]int
	calls    []string
	limit    int
	counted  []uuid.UUID
	reads    map[uuid.UUID]int64
}

func (s *tlStore) ChannelThreads(_ context.Context, q app.ChannelThreadsQuery) (app.ChannelThreads, error) {
	s.calls = append(s.calls, "ChannelThreads")
	if q.ChannelID != s.channel.ID {
		return app.ChannelThreads{}, problem.ErrNotFound
	}
	s.limit = q.Limit
	out := app.ChannelThreads{Channel: s.channel, Items: slices.Clone(s.items[:min(q.Limit, len(s.items))])}
	for _, it := range out.Items {
		m, ok := s.seqs[it.Thread.ID]
		if !ok {
			m.Complete = true
		}
		out.Mentions = append(out.Mentions, m)
	}
	return out, nil
}

func (s *tlStore) CountUnreadMentionsInThreads(_ context.Context, _, _ uuid.UUID, ids []uuid.UUID, reads map[uuid.UUID]int64) (map[uuid.UUID]int, error) {
	s.calls = append(s.calls, "CountUnreadMentionsInThreads")
	s.counted, s.reads = ids, reads
	out := map[uuid.UUID]int{}
	for _, id := range ids {
		if n, ok := s.mentions[id]; ok {
			out[id] = n
		}
	}
	return out, nil
}

// tlUnreads reads positions from a map and counts like sync's rule.
type tlUnreads map[uuid.UUID]int64

func (u tlUnreads) Unread(_ context.Context, _ uuid.UUID, counters []chat.ThreadCounter) ([]app.ThreadUnread, error) {
	out := make([]app.ThreadUnread, len(counters))
	for i, c := range counters {
		out[i] = app.ThreadUnread{LastReadSeq: u[c.ThreadID], UnreadCount: max(0, c.LastMessageSeq-max(u[c.ThreadID], c.UnreadFloorSeq))}
	}
	return out, nil
}

// tlAuthorizer denies every action with deny (nil: allows) and records the resources.
type tlAuthorizer struct {
	deny  error
	asked []authorize.Resource
}

func (a *tlAuthorizer) Authorize(_ context.Context, action kernel.Action, res authorize.Resource) error {
	if action != kernel.ActionThreadRead {
		return errors.New("unexpected action " + string(action))
	}
	a.asked = append(a.asked, res)
	return a.deny
}

func TestThreadListInChannel(t *testing.T) {
	t.Parallel()
	space, channel := uuid.New(), uuid.New()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var items []chat.ThreadSummary
	for i := range 5 {
		items = append(items, chat.ThreadSummary{
			Thread:        chat.Thread{ID: uuid.New(), ChannelID: channel, SpaceID: space, LastMessageSeq: int64(i + 1)},
			LastMessageAt: at.Add(-time.Duration(i) * time.Minute),
		})
	}
	reader := actor.With(context.Background(), actor.Actor{PrincipalID: uuid.New(), Kind: actor.KindPerson})
	cfg := app.ThreadListConfig{PageSize: 3, ExcerptChars: 10}

	tests := []struct {
		name      string
		limit     int
		deny      error
		channel   uuid.UUID
		wantErr   error
		wantLimit int
		wantNext  bool
	}{
		{name: "default limit, full page", limit: 0, wantLimit: 3, wantNext: true},
		{name: "limit above the page size", limit: 99, wantLimit: 3, wantNext: true},
		{name: "small limit", limit: 2, wantLimit: 2, wantNext: true},
		{name: "invisible channel", deny: problem.ErrNotFound, wantErr: problem.ErrNotFound},
		{name: "missing channel", channel: uuid.New(), wantErr: problem.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// items[0]: seq 1, read to 1, a mention at 1 (read); items[1]: seq 2, unread, more
			// mentions than the page carries (the store counts 2); items[2]: seq 3, read to 3.
			store := &tlStore{
				channel:  chat.Channel{ID: channel, SpaceID: space, Kind: chat.ChannelStandard},
				items:    items,
				seqs:     map[uuid.UUID]app.MentionSeqs{items[0].Thread.ID: {Seqs: []int64{1}, Complete: true}, items[1].Thread.ID: {Seqs: []int64{2}}},
				mentions: map[uuid.UUID]int{items[1].Thread.ID: 2},
			}
			authz := &tlAuthorizer{deny: tc.deny}
			unreads := &tlUnreadsCalls{tlUnreads: tlUnreads{items[0].Thread.ID: 1, items[2].Thread.ID: 3}}
			l, err := app.NewThreadList(app.ThreadListDeps{Store: store, Authorizer: authz, Unreads: unreads, Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			id := channel
			if tc.channel != uuid.Nil {
				id = tc.channel
			}
			page, err := l.InChannel(reader, id, chat.ThreadPosition{}, tc.limit)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || len(page.Items) != 0 {
					t.Fatalf("err %v with %d items, want %v and none", err, len(page.Items), tc.wantErr)
				}
				if unreads.calls != 0 || slices.Contains(store.calls, "CountUnreadMentionsInThreads") {
					t.Fatalf("counts were read before a refusal: %v, %d unread calls", store.calls, unreads.calls)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(authz.asked) != 1 || authz.asked[0] != (authorize.Resource{Kind: kernel.ResourceChannel, ID: channel, SpaceID: space, ChannelID: channel}) {
				t.Fatalf("authorized %+v, want thread.read on the channel with its space", authz.asked)
			}
			if store.limit != tc.wantLimit || len(page.Items) != tc.wantLimit || page.Next.IsZero() == tc.wantNext {
				t.Fatalf("limit %d, %d items, next %+v", store.limit, len(page.Items), page.Next)
			}
			if page.Next != page.Items[len(page.Items)-1].Position() {
				t.Fatalf("next %+v, want the last item's position", page.Next)
			}
			want := [][2]int64{{0, 0}, {2, 2}, {0, 0}}
			for i, it := range page.Items {
				if got := [2]int64{it.UnreadCount, it.MentionCount}; got != want[i] {
					t.Fatalf("item %d counts %v, want %v", i, got, want[i])
				}
			}
			// Only items[1]'s seqs stop above its read position: the store counts it alone.
			if !slices.Equal(store.counted, []uuid.UUID{items[1].Thread.ID}) || len(store.reads) != 0 {
				t.Fatalf("the store counted %v with read positions %v, want %s alone, unread", store.counted, store.reads, items[1].Thread.ID)
			}
		})
	}
}

// tlUnreadsCalls counts the calls of tlUnreads.
type tlUnreadsCalls struct {
	tlUnreads
	calls int
}

func (u *tlUnreadsCalls) Unread(ctx context.Context, principalID uuid.UUID, counters []chat.ThreadCounter) ([]app.ThreadUnread, error) {
	u.calls++
	return u.tlUnreads.Unread(ctx, principalID, counters)
}

func TestMentionSeqsCountAbove(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		m         app.MentionSeqs
		read      int64
		want      int
		wantExact bool
	}{
		{name: "none", m: app.MentionSeqs{Complete: true}, read: 0, want: 0, wantExact: true},
		{name: "complete, none read", m: app.MentionSeqs{Seqs: []int64{9, 5, 2}, Complete: true}, read: 0, want: 3, wantExact: true},
		{name: "complete, some read", m: app.MentionSeqs{Seqs: []int64{9, 5, 2}, Complete: true}, read: 5, want: 1, wantExact: true},
		{name: "complete, all read", m: app.MentionSeqs{Seqs: []int64{9, 5, 2}, Complete: true}, read: 9, want: 0, wantExact: true},
		{name: "incomplete, read within", m: app.MentionSeqs{Seqs: []int64{9, 5, 2}}, read: 2, want: 2, wantExact: true},
		{name: "incomplete, read below", m: app.MentionSeqs{Seqs: []int64{9, 5, 2}}, read: 1, want: 3, wantExact: false},
		{name: "incomplete, none read", m: app.MentionSeqs{Seqs: []int64{9, 5, 2}}, read: 0, want: 3, wantExact: false},
	} {
		n, exact := tc.m.CountAbove(tc.read)
		if n != tc.want || exact != tc.wantExact {
			t.Errorf("%s: CountAbove(%d) = %d, %v; want %d, %v", tc.name, tc.read, n, exact, tc.want, tc.wantExact)
		}
	}
}

func TestNewThreadListRefusesMissingDeps(t *testing.T) {
	t.Parallel()
	good := app.ThreadListDeps{Store: &tlStore{}, Authorizer: &tlAuthorizer{}, Unreads: tlUnreads{}, Config: app.ThreadListConfig{PageSize: 1, ExcerptChars: 1}}
	for name, change := range map[string]func(*app.ThreadListDeps){
		"store":      func(d *app.ThreadListDeps) { d.Store = nil },
		"authorizer": func(d *app.ThreadListDeps) { d.Authorizer = nil },
		"unreads":    func(d *app.ThreadListDeps) { d.Unreads = nil },
		"page size":  func(d *app.ThreadListDeps) { d.Config.PageSize = 0 },
		"excerpt":    func(d *app.ThreadListDeps) { d.Config.ExcerptChars = 0 },
	} {
		d := good
		change(&d)
		if _, err := app.NewThreadList(d); err == nil {
			t.Errorf("%s: NewThreadList accepted it", name)
		}
	}
	if _, err := app.NewThreadList(good); err != nil {
		t.Fatalf("good deps: %v", err)
	}
}
