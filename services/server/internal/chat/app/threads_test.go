package app_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/chat/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

// thread starts a thread as alex and returns it with its first message.
func (e *env) thread(t *testing.T, ch chat.Channel, text string) (chat.Thread, chat.Message) {
	t.Helper()
	th, m, err := e.svc.Threads().Create(as(t, alex), chat.ThreadInput{ChannelID: ch.ID, ContentMD: text})
	if err != nil {
		t.Fatalf("create thread: %v", err)
	}
	return th, m
}

func TestCreateThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := e.space(t, "Support")
	ch := e.channel(t, sp.ID, "general")
	// Robin may read the channel, Sam may not; nobody has the handle nobody.
	e.authz.readers[ch.ID] = []uuid.UUID{robin, alex}
	seen := len(e.appender.events())
	e.authz.Reset()
	th, m, err := e.svc.Threads().Create(as(t, sam), chat.ThreadInput{
		ChannelID: ch.ID, Title: " Release ", ContentMD: "Hi @Robin, @sam and @nobody; ask @robin.", ExternalKey: "git:1",
	})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if th.ChannelID != ch.ID || th.SpaceID != sp.ID || th.Title != "Release" || th.CreatedBy != sam || th.Version != 1 || th.LastMessageSeq != 1 {
		t.Fatalf("thread = %+v", th)
	}
	if m.ThreadID != th.ID || m.Seq != 1 || m.AuthorID != sam || m.ExternalKey != "git:1" || !slices.Equal(m.MentionIDs, []uuid.UUID{robin}) {
		t.Fatalf("message = %+v", m)
	}
	if calls := e.authz.Calls(); len(calls) != 1 || calls[0].Action != kernel.ActionThreadCreate ||
		calls[0].Res != (authorize.Resource{Kind: kernel.ResourceChannel, ID: ch.ID, SpaceID: sp.ID, ChannelID: ch.ID}) {
		t.Fatalf("authorized %+v, want thread.create on the channel", calls)
	}
	evs := e.newEvents(&seen)
	wantEvents(t, evs,
		placed{typ: "thread.created", actor: sam, space: sp.ID, channel: ch.ID, thread: th.ID, kind: kernel.ResourceThread, resource: th.ID},
		placed{typ: "message.created", actor: sam, space: sp.ID, channel: ch.ID, thread: th.ID, kind: kernel.ResourceMessage, resource: m.ID},
	)
	if p := payload(evs[0]); p["title"] != "Release" || p["created_by"] != sam.String() || p["version"] != 1.0 {
		t.Errorf("thread payload = %v", p)
	}
	if p := payload(evs[1]); p["seq"] != 1.0 || p["content_md"] != m.ContentMD || len(p["mention_ids"].([]any)) != 1 || p["mention_ids"].([]any)[0] != robin.String() {
		t.Errorf("message payload = %v", p)
	}
	if got := e.store.message(m.ID); !slices.Equal(got.MentionIDs, []uuid.UUID{robin}) {
		t.Errorf("stored mentions = %v", got.MentionIDs)
	}
	// Sam's first message is read: his read state moves to seq 1 in the thread's transaction.
	if got := e.ownReads.posts(); len(got) != 1 || got[0] != (app.OwnPost{AuthorID: sam, SpaceID: sp.ID, ChannelID: ch.ID, ThreadID: th.ID, Seq: 1}) {
		t.Errorf("own posts marked read = %+v, want Sam's seq 1 of the thread", got)
	}

	// Without mentions: none in the payload and no lookup.
	lookups := e.dir.byHandle
	_, plain := e.thread(t, ch, "no one in particular")
	if e.dir.byHandle != lookups {
		t.Errorf("a text without mentions was looked up")
	}
	evs = e.newEvents(&seen)
	if _, ok := payload(evs[1])["mention_ids"]; ok || plain.MentionIDs != nil {
		t.Errorf("payload %v has mention_ids", payload(evs[1]))
	}
	if _, ok := payload(evs[0])["title"]; ok {
		t.Errorf("payload %v has a title", payload(evs[0]))
	}

	archived := e.channel(t, sp.ID, "old")
	if _, err := e.svc.Channels().Archive(as(t, alex), archived.ID); err != nil {
		t.Fatal(err)
	}
	seen = len(e.appender.events())
	before := e.store.sizes()
	tests := []struct {
		name   string
		setup  func()
		in     chat.ThreadInput
		kind   error
		fields []string
	}{
		{"invalid", func() {}, chat.ThreadInput{ChannelID: ch.ID, Title: strings.Repeat("t", domain.MaxTitleLen+1), ContentMD: strings.Repeat("x", testConfig.MaxMessageBytes+1)},
			problem.ErrValidation, []string{"title", "content_md"}},
		{"archived channel", func() {}, chat.ThreadInput{ChannelID: archived.ID, ContentMD: "hi"}, domain.ErrChannelArchived, nil},
		{"unknown channel", func() {}, chat.ThreadInput{ChannelID: uuid.New(), ContentMD: "hi"}, problem.ErrNotFound, nil},
		{"duplicate key", func() {}, chat.ThreadInput{ChannelID: ch.ID, ContentMD: "hi", ExternalKey: "git:1"}, chat.ErrDuplicateKey, nil},
		{"denied", func() { e.authz.denyOn(kernel.ActionThreadCreate, ch.ID, problem.ErrForbidden) }, chat.ThreadInput{ChannelID: ch.ID, ContentMD: "hi"}, problem.ErrForbidden, nil},
		{"failing thread store", func() {
			e.authz.denyOn(kernel.ActionThreadCreate, ch.ID, nil)
			e.store.fail("InsertThread", errDB)
		}, chat.ThreadInput{ChannelID: ch.ID, ContentMD: "hi"}, errDB, nil},
		{"failing message store", func() { e.store.fail("InsertMessage", errDB) }, chat.ThreadInput{ChannelID: ch.ID, ContentMD: "hi"}, errDB, nil},
		{"failing append", func() { e.appender.fail(errDB) }, chat.ThreadInput{ChannelID: ch.ID, ContentMD: "hi"}, errDB, nil},
		{"failing read state", func() { e.ownReads.failNext = errDB }, chat.ThreadInput{ChannelID: ch.ID, ContentMD: "hi"}, errDB, nil},
		{"failing mention lookup", func() { e.dir.fail = errDB }, chat.ThreadInput{ChannelID: ch.ID, ContentMD: "hi @sam"}, errDB, nil},
		{"failing reader check", func() {
			e.dir.fail = nil
			e.authz.readErr = errDB
		}, chat.ThreadInput{ChannelID: ch.ID, ContentMD: "hi @sam"}, errDB, nil},
		{"failing authorizer", func() {
			e.authz.readErr = nil
			e.authz.fail = errDB
		}, chat.ThreadInput{ChannelID: ch.ID, ContentMD: "hi"}, errDB, nil},
	}
	for _, tc := range tests {
		tc.setup()
		_, _, err := e.svc.Threads().Create(as(t, sam), tc.in)
		wantProblem(t, err, tc.kind, tc.fields...)
		if got := e.newEvents(&seen); len(got) != 0 {
			t.Errorf("%s: events %v", tc.name, got)
		}
		if got := e.store.sizes(); got != before {
			t.Errorf("%s: store %v, want %v", tc.name, got, before)
		}
	}
	e.authz.fail = nil
	if _, _, err := e.svc.Threads().Create(t.Context(), chat.ThreadInput{ChannelID: ch.ID, ContentMD: "hi"}); !errorsIs(err, problem.ErrUnauthenticated) {
		t.Errorf("without actor = %v", err)
	}
}

func TestThreadReaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := e.space(t, "Support")
	ch, quiet := e.channel(t, sp.ID, "general"), e.channel(t, sp.ID, "quiet")
	e.authz.readers[ch.ID] = []uuid.UUID{sam}
	th, _ := e.thread(t, ch, "hello @sam")
	if _, err := e.svc.Messages().Post(as(t, alex), chat.MessageInput{ThreadID: th.ID, ContentMD: "again @sam"}); err != nil {
		t.Fatal(err)
	}
	e.thread(t, quiet, "nothing")

	got, err := e.svc.Threads().Get(t.Context(), th.ID)
	if err != nil || got.ID != th.ID || got.LastMessageSeq != 2 || got.Version != 2 {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if _, err := e.svc.Threads().Get(t.Context(), uuid.New()); !errorsIs(err, problem.ErrNotFound) {
		t.Fatalf("Get unknown = %v", err)
	}

	counters, err := e.svc.Threads().Counters(t.Context(), []uuid.UUID{ch.ID})
	if err != nil || len(counters) != 1 {
		t.Fatalf("Counters = %+v, %v", counters, err)
	}
	if c := counters[0]; c != (chat.ThreadCounter{ThreadID: th.ID, ChannelID: ch.ID, SpaceID: sp.ID, LastMessageSeq: 2, Version: 2}) {
		t.Fatalf("counter = %+v", c)
	}
	calls := e.store.count("ThreadCounters")
	if got, err := e.svc.Threads().Counters(t.Context(), nil); err != nil || len(got) != 0 || got == nil {
		t.Fatalf("Counters(none) = %v, %v", got, err)
	}
	if e.store.count("ThreadCounters") != calls {
		t.Fatalf("Counters(none) queried")
	}
	e.store.fail("ThreadCounters", errDB)
	if _, err := e.svc.Threads().Counters(t.Context(), []uuid.UUID{ch.ID}); !errorsIs(err, errDB) {
		t.Fatalf("failing Counters = %v", err)
	}

	counts, err := e.svc.Mentions().CountUnread(t.Context(), sam, []uuid.UUID{ch.ID, quiet.ID}, map[uuid.UUID]int64{th.ID: 1})
	if err != nil || len(counts) != 1 || counts[th.ID] != 1 {
		t.Fatalf("CountUnread = %v, %v; want 1 in the thread (seq 2 above the read seq 1)", counts, err)
	}
	if got, err := e.svc.Mentions().CountUnread(t.Context(), sam, nil, nil); err != nil || len(got) != 0 || got == nil {
		t.Fatalf("CountUnread(no channels) = %v, %v", got, err)
	}
	e.store.fail("CountUnreadMentions", errDB)
	if _, err := e.svc.Mentions().CountUnread(t.Context(), sam, []uuid.UUID{ch.ID}, nil); !errorsIs(err, errDB) {
		t.Fatalf("failing CountUnread = %v", err)
	}
}
