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
// in activity order), mention counts per thread; it records the calls.
type tlStore struct {
	channel  chat.Channel
	items    []chat.ThreadSummary
	mentions map[uuid.UUID]int
	calls    []string
	limit    int
	reads    map[uuid.UUID]int64
}

func (s *tlStore) Channel(_ context.Context, id uuid.UUID) (chat.Channel, error) {
	s.calls = append(s.calls, "Channel")
	if id != s.channel.ID {
		return chat.Channel{}, problem.ErrNotFound
	}
	return s.channel, nil
}

func (s *tlStore) ThreadsOfChannel(_ context.Context, _ uuid.UUID, _ chat.ThreadPosition, limit, _ int) ([]chat.ThreadSummary, error) {
	s.calls = append(s.calls, "ThreadsOfChannel")
	s.limit = limit
	return slices.Clone(s.items[:min(limit, len(s.items))]), nil
}

func (s *tlStore) CountUnreadMentionsInThreads(_ context.Context, _, _ uuid.UUID, _ []uuid.UUID, reads map[uuid.UUID]int64) (map[uuid.UUID]int, error) {
	s.calls = append(s.calls, "CountUnreadMentionsInThreads")
	s.reads = reads
	return s.mentions, nil
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
			store := &tlStore{
				channel: chat.Channel{ID: channel, SpaceID: space, Kind: chat.ChannelStandard},
				items:   items, mentions: map[uuid.UUID]int{items[1].Thread.ID: 2},
			}
			authz := &tlAuthorizer{deny: tc.deny}
			l, err := app.NewThreadList(app.ThreadListDeps{Store: store, Authorizer: authz, Unreads: tlUnreads{items[0].Thread.ID: 1, items[2].Thread.ID: 3}, Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			id := channel
			if tc.channel != uuid.Nil {
				id = tc.channel
			}
			page, err := l.InChannel(reader, id, chat.ThreadPosition{}, tc.limit)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err %v, want %v", err, tc.wantErr)
				}
				if slices.Contains(store.calls, "ThreadsOfChannel") {
					t.Fatalf("the page was read before a refusal: %v", store.calls)
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
			// items[0]: seq 1 read to 1; items[1]: seq 2 unread, 2 mentions; items[2]: seq 3 read.
			want := [][2]int64{{0, 0}, {2, 2}, {0, 0}}
			for i, it := range page.Items {
				if got := [2]int64{it.UnreadCount, it.MentionCount}; got != want[i] {
					t.Fatalf("item %d counts %v, want %v", i, got, want[i])
				}
			}
			wantReads := 1 // items[0]'s, and items[2]'s when the page reaches it
			if tc.wantLimit >= 3 {
				wantReads = 2
			}
			if store.reads[items[0].Thread.ID] != 1 || len(store.reads) != wantReads {
				t.Fatalf("the mention count got read positions %v", store.reads)
			}
		})
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
