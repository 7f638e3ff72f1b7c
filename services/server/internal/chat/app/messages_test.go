package app_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/chat/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

func TestPostMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := e.space(t, "Support")
	ch := e.channel(t, sp.ID, "general")
	th, _ := e.thread(t, ch, "first")
	e.authz.readers[ch.ID] = []uuid.UUID{alex}
	seen := len(e.appender.events())
	e.authz.Reset()
	e.clock.Advance(time2h)
	m, err := e.svc.Messages().Post(as(t, sam), chat.MessageInput{ThreadID: th.ID, ContentMD: "thanks @alex", ExternalKey: "git:2"})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	if m.Seq != 2 || m.ThreadID != th.ID || m.ChannelID != ch.ID || m.SpaceID != sp.ID || m.AuthorID != sam ||
		!m.CreatedAt.Equal(start.Add(time2h)) || len(m.MentionIDs) != 1 || m.MentionIDs[0] != alex {
		t.Fatalf("message = %+v", m)
	}
	if calls := e.authz.Calls(); len(calls) != 1 || calls[0].Action != kernel.ActionMessageCreate ||
		calls[0].Res != (authorize.Resource{Kind: kernel.ResourceThread, ID: th.ID, SpaceID: sp.ID, ChannelID: ch.ID, ThreadID: th.ID}) {
		t.Fatalf("authorized %+v, want message.create on the thread", calls)
	}
	evs := e.newEvents(&seen)
	wantEvents(t, evs, placed{typ: "message.created", actor: sam, space: sp.ID, channel: ch.ID, thread: th.ID, kind: kernel.ResourceMessage, resource: m.ID})
	if p := payload(evs[0]); p["seq"] != 2.0 || p["author_id"] != sam.String() || p["content_md"] != "thanks @alex" {
		t.Errorf("payload = %v", p)
	}
	// Sam's own post is read: his read state moves to it, in the post's transaction.
	if got := e.ownReads.posts(); len(got) == 0 || got[len(got)-1] != (app.OwnPost{AuthorID: sam, SpaceID: sp.ID, ChannelID: ch.ID, ThreadID: th.ID, Seq: 2}) {
		t.Errorf("own posts marked read = %+v, want Sam's seq 2 last", got)
	}
	// An app's post is its output, not something it reads: no read state moves.
	marked := len(e.ownReads.posts())
	appCtx := actor.With(t.Context(), actor.Actor{PrincipalID: sam, Kind: actor.KindApp})
	if _, err := e.svc.Messages().Post(appCtx, chat.MessageInput{ThreadID: th.ID, ContentMD: "from an app"}); err != nil {
		t.Fatal(err)
	}
	if got := e.ownReads.posts(); len(got) != marked {
		t.Errorf("an app's post marked %+v read, want nothing", got[marked:])
	}
	for range 2 {
		if _, err := e.svc.Messages().Post(as(t, sam), chat.MessageInput{ThreadID: th.ID, ContentMD: "more"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.store.thread(th.ID); got.LastMessageSeq != 5 || got.Version != 5 {
		t.Fatalf("thread after 4 posts = %+v, want seq 5 and version 5", got)
	}

	seen = len(e.appender.events())
	before, thread := e.store.sizes(), e.store.thread(th.ID)
	tests := []struct {
		name   string
		setup  func()
		in     chat.MessageInput
		kind   error
		fields []string
	}{
		{"empty", func() {}, chat.MessageInput{ThreadID: th.ID, ContentMD: "  "}, problem.ErrValidation, []string{"content_md"}},
		{"too long", func() {}, chat.MessageInput{ThreadID: th.ID, ContentMD: strings.Repeat("x", testConfig.MaxMessageBytes+1)}, problem.ErrValidation, []string{"content_md"}},
		{"unknown thread", func() {}, chat.MessageInput{ThreadID: uuid.New(), ContentMD: "hi"}, problem.ErrNotFound, nil},
		{"duplicate key", func() {}, chat.MessageInput{ThreadID: th.ID, ContentMD: "hi", ExternalKey: "git:2"}, chat.ErrDuplicateKey, nil},
		{"denied", func() { e.authz.denyOn(kernel.ActionMessageCreate, th.ID, problem.ErrNotFound) }, chat.MessageInput{ThreadID: th.ID, ContentMD: "hi"}, problem.ErrNotFound, nil},
		{"failing post", func() {
			e.authz.denyOn(kernel.ActionMessageCreate, th.ID, nil)
			e.store.fail("PostMessage", errDB)
		}, chat.MessageInput{ThreadID: th.ID, ContentMD: "hi"}, errDB, nil},
		{"failing append", func() { e.appender.fail(errDB) }, chat.MessageInput{ThreadID: th.ID, ContentMD: "hi"}, errDB, nil},
		{"failing read state", func() { e.ownReads.failNext = errDB }, chat.MessageInput{ThreadID: th.ID, ContentMD: "hi"}, errDB, nil},
		{"failing mentions", func() { e.dir.fail = errDB }, chat.MessageInput{ThreadID: th.ID, ContentMD: "hi @alex"}, errDB, nil},
	}
	for _, tc := range tests {
		tc.setup()
		_, err := e.svc.Messages().Post(as(t, sam), tc.in)
		wantProblem(t, err, tc.kind, tc.fields...)
		if got := e.newEvents(&seen); len(got) != 0 {
			t.Errorf("%s: events %v", tc.name, got)
		}
		if got := e.store.sizes(); got != before {
			t.Errorf("%s: store %v, want %v", tc.name, got, before)
		}
		if got := e.store.thread(th.ID); got != thread {
			t.Errorf("%s: thread %+v, want %+v (seq not taken)", tc.name, got, thread)
		}
	}
	e.dir.fail = nil

	if _, err := e.svc.Channels().Archive(as(t, alex), ch.ID); err != nil {
		t.Fatal(err)
	}
	seen = len(e.appender.events())
	if _, err := e.svc.Messages().Post(as(t, sam), chat.MessageInput{ThreadID: th.ID, ContentMD: "late"}); !errorsIs(err, domain.ErrChannelArchived) {
		t.Fatalf("Post into an archived channel = %v", err)
	}
	if got := e.store.thread(th.ID); got != thread {
		t.Fatalf("refused post advanced the thread: %+v", got)
	}
	if got := e.newEvents(&seen); len(got) != 0 {
		t.Fatalf("refused post appended %v", got)
	}
	if _, err := e.svc.Messages().Post(t.Context(), chat.MessageInput{ThreadID: th.ID, ContentMD: "hi"}); !errorsIs(err, problem.ErrUnauthenticated) {
		t.Fatalf("without actor = %v", err)
	}
}

func TestListMessages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := e.space(t, "Support")
	ch := e.channel(t, sp.ID, "general")
	th, _ := e.thread(t, ch, "1")
	for _, text := range []string{"2", "3", "4", "5"} {
		if _, err := e.svc.Messages().Post(as(t, alex), chat.MessageInput{ThreadID: th.ID, ContentMD: text}); err != nil {
			t.Fatal(err)
		}
	}
	seqs := func(ms []chat.Message) []int64 {
		var out []int64
		for _, m := range ms {
			out = append(out, m.Seq)
		}
		return out
	}
	tests := []struct {
		after int64
		limit int
		want  []int64
	}{
		{0, 0, []int64{1, 2, 3}},   // the page size
		{0, 100, []int64{1, 2, 3}}, // capped
		{0, 2, []int64{1, 2}},
		{3, 0, []int64{4, 5}},
		{5, 0, nil},
	}
	for _, tc := range tests {
		e.authz.Reset()
		got, err := e.svc.Messages().List(as(t, sam), th.ID, tc.after, tc.limit)
		if err != nil {
			t.Fatalf("List(%d, %d): %v", tc.after, tc.limit, err)
		}
		if s := seqs(got); !equalInts(s, tc.want) {
			t.Errorf("List(%d, %d) = %v, want %v", tc.after, tc.limit, s, tc.want)
		}
		if calls := e.authz.Calls(); len(calls) != 1 || calls[0].Action != kernel.ActionThreadRead ||
			calls[0].Res != (authorize.Resource{Kind: kernel.ResourceThread, ID: th.ID, SpaceID: sp.ID, ChannelID: ch.ID, ThreadID: th.ID}) {
			t.Errorf("authorized %+v, want thread.read on the thread", calls)
		}
	}
	_, err := e.svc.Messages().List(as(t, sam), th.ID, -1, 0)
	wantProblem(t, err, problem.ErrValidation, "after")
	if _, err := e.svc.Messages().List(as(t, sam), uuid.New(), 0, 0); !errorsIs(err, problem.ErrNotFound) {
		t.Errorf("unknown thread = %v", err)
	}
	e.store.fail("Messages", errDB)
	if _, err := e.svc.Messages().List(as(t, sam), th.ID, 0, 0); !errorsIs(err, errDB) {
		t.Errorf("failing store = %v", err)
	}
	e.authz.denyOn(kernel.ActionThreadRead, th.ID, problem.ErrNotFound)
	if _, err := e.svc.Messages().List(as(t, sam), th.ID, 0, 0); !errorsIs(err, problem.ErrNotFound) {
		t.Errorf("denied = %v", err)
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestEditMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := e.space(t, "Support")
	ch := e.channel(t, sp.ID, "general")
	th, first := e.thread(t, ch, "hello @sam")
	e.authz.readers[ch.ID] = []uuid.UUID{robin}
	own, err := e.svc.Messages().Post(as(t, sam), chat.MessageInput{ThreadID: th.ID, ContentMD: "mine"})
	if err != nil {
		t.Fatal(err)
	}

	// Sam edits Sam's own message: asked on the message.
	seen := len(e.appender.events())
	e.authz.Reset()
	e.clock.Advance(time2h)
	edited, err := e.svc.Messages().Edit(as(t, sam), own.ID, "mine, @robin")
	if err != nil {
		t.Fatalf("Edit own: %v", err)
	}
	if edited.ContentMD != "mine, @robin" || !edited.EditedAt.Equal(start.Add(time2h)) || len(edited.MentionIDs) != 1 || edited.MentionIDs[0] != robin || edited.Seq != 2 {
		t.Fatalf("edited = %+v", edited)
	}
	if calls := e.authz.Calls(); len(calls) != 1 || calls[0].Action != kernel.ActionMessageUpdate ||
		calls[0].Res != (authorize.Resource{Kind: kernel.ResourceMessage, ID: own.ID, SpaceID: sp.ID, ChannelID: ch.ID, ThreadID: th.ID}) {
		t.Fatalf("authorized %+v, want message.update on the message", calls)
	}
	evs := e.newEvents(&seen)
	wantEvents(t, evs, placed{typ: "message.edited", actor: sam, space: sp.ID, channel: ch.ID, thread: th.ID, kind: kernel.ResourceMessage, resource: own.ID})
	if p := payload(evs[0]); p["content_md"] != "mine, @robin" || p["seq"] != 2.0 || p["author_id"] != sam.String() || p["edited_at"] == nil {
		t.Errorf("payload = %v", p)
	}
	if got := e.store.message(own.ID); got.ContentMD != "mine, @robin" || len(got.MentionIDs) != 1 {
		t.Errorf("stored = %+v", got)
	}

	// Sam edits Alex's message: asked on the message, then on the channel (moderation).
	e.authz.Reset()
	if _, err := e.svc.Messages().Edit(as(t, sam), first.ID, "moderated"); err != nil {
		t.Fatalf("Edit other's: %v", err)
	}
	if calls := e.authz.Calls(); len(calls) != 2 || calls[0].Action != kernel.ActionMessageUpdate || calls[0].Res.Kind != kernel.ResourceMessage ||
		calls[1].Action != kernel.ActionMessageUpdate ||
		calls[1].Res != (authorize.Resource{Kind: kernel.ResourceChannel, ID: ch.ID, SpaceID: sp.ID, ChannelID: ch.ID}) {
		t.Fatalf("authorized %+v, want message.update on the message, then on the channel", calls)
	}
	if got := e.store.message(first.ID); got.MentionIDs != nil {
		t.Errorf("edit kept the old mentions: %+v", got)
	}
	e.newEvents(&seen)

	before := e.store.message(own.ID)
	tests := []struct {
		name   string
		setup  func()
		id     uuid.UUID
		text   string
		kind   error
		fields []string
	}{
		{"invalid", func() {}, own.ID, "", problem.ErrValidation, []string{"content_md"}},
		{"unknown", func() {}, uuid.New(), "x", problem.ErrNotFound, nil},
		{"other's without admin", func() { e.authz.denyOn(kernel.ActionMessageUpdate, ch.ID, problem.ErrForbidden) }, first.ID, "x", problem.ErrForbidden, nil},
		{"own without member", func() { e.authz.denyOn(kernel.ActionMessageUpdate, own.ID, problem.ErrForbidden) }, own.ID, "x", problem.ErrForbidden, nil},
		{"failing update", func() {
			e.authz.denyOn(kernel.ActionMessageUpdate, own.ID, nil)
			e.store.fail("UpdateMessage", errDB)
		}, own.ID, "x", errDB, nil},
		{"failing append", func() { e.appender.fail(errDB) }, own.ID, "x", errDB, nil},
		{"failing channel read", func() { e.store.fail("Channel", errDB) }, own.ID, "x", errDB, nil},
		{"failing mentions", func() { e.dir.fail = errDB }, own.ID, "x @robin", errDB, nil},
	}
	for _, tc := range tests {
		tc.setup()
		_, err := e.svc.Messages().Edit(as(t, sam), tc.id, tc.text)
		wantProblem(t, err, tc.kind, tc.fields...)
		if got := e.newEvents(&seen); len(got) != 0 {
			t.Errorf("%s: events %v", tc.name, got)
		}
		if got := e.store.message(own.ID); got.ContentMD != before.ContentMD || !got.EditedAt.Equal(before.EditedAt) {
			t.Errorf("%s: message changed to %+v", tc.name, got)
		}
	}
	e.dir.fail = nil

	if err := e.svc.Messages().Delete(as(t, sam), own.ID); err != nil {
		t.Fatal(err)
	}
	e.newEvents(&seen)
	if _, err := e.svc.Messages().Edit(as(t, sam), own.ID, "back"); !errorsIs(err, domain.ErrMessageDeleted) {
		t.Fatalf("Edit of a deleted message = %v, want ErrMessageDeleted", err)
	}
	if _, err := e.svc.Channels().Archive(as(t, alex), ch.ID); err != nil {
		t.Fatal(err)
	}
	e.newEvents(&seen)
	if _, err := e.svc.Messages().Edit(as(t, alex), first.ID, "late"); !errorsIs(err, domain.ErrChannelArchived) {
		t.Fatalf("Edit in an archived channel = %v, want ErrChannelArchived", err)
	}
	if got := e.newEvents(&seen); len(got) != 0 {
		t.Fatalf("refused edits appended %v", got)
	}
	if _, err := e.svc.Messages().Edit(t.Context(), first.ID, "x"); !errorsIs(err, problem.ErrUnauthenticated) {
		t.Fatalf("without actor = %v", err)
	}
}

func TestDeleteMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := e.space(t, "Support")
	ch := e.channel(t, sp.ID, "general")
	e.authz.readers[ch.ID] = []uuid.UUID{sam}
	th, first := e.thread(t, ch, "secret for @sam")
	own, err := e.svc.Messages().Post(as(t, sam), chat.MessageInput{ThreadID: th.ID, ContentMD: "mine", ExternalKey: "git:7"})
	if err != nil {
		t.Fatal(err)
	}

	seen := len(e.appender.events())
	e.authz.Reset()
	e.clock.Advance(time2h)
	if err := e.svc.Messages().Delete(as(t, sam), first.ID); err != nil {
		t.Fatalf("Delete other's: %v", err)
	}
	if calls := e.authz.Calls(); len(calls) != 2 || calls[0].Action != kernel.ActionMessageDelete || calls[0].Res.Kind != kernel.ResourceMessage ||
		calls[1].Action != kernel.ActionMessageDelete ||
		calls[1].Res != (authorize.Resource{Kind: kernel.ResourceChannel, ID: ch.ID, SpaceID: sp.ID, ChannelID: ch.ID}) {
		t.Fatalf("authorized %+v, want message.delete on the message, then on the channel", calls)
	}
	got := e.store.message(first.ID)
	if got.ContentMD != "" || got.MentionIDs != nil || !got.RedactedAt.Equal(start.Add(time2h)) {
		t.Fatalf("deleted message = %+v, want its content and mentions cleared", got)
	}
	evs := e.newEvents(&seen)
	if len(evs) != 2 || evs[0].Type != "redact" || evs[0].ResourceKind != kernel.ResourceMessage || evs[0].ResourceID != first.ID {
		t.Fatalf("events = %+v, want the redaction of the message first", evs)
	}
	wantEvents(t, evs[1:], placed{typ: "message.deleted", actor: sam, space: sp.ID, channel: ch.ID, thread: th.ID, kind: kernel.ResourceMessage, resource: first.ID})
	p := payload(evs[1])
	if p["seq"] != 1.0 || p["author_id"] != alex.String() || p["redacted_at"] == nil {
		t.Errorf("payload = %v", p)
	}
	if _, ok := p["content_md"]; ok {
		t.Errorf("message.deleted carries text: %v", p)
	}

	// Deleting again changes nothing.
	if err := e.svc.Messages().Delete(as(t, sam), first.ID); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	if got := e.newEvents(&seen); len(got) != 0 {
		t.Fatalf("second Delete appended %v", got)
	}

	// Own message: asked on the message; the external key stays.
	e.authz.Reset()
	if err := e.svc.Messages().Delete(as(t, sam), own.ID); err != nil {
		t.Fatalf("Delete own: %v", err)
	}
	if calls := e.authz.Calls(); calls[0].Res.Kind != kernel.ResourceMessage || calls[0].Res.ID != own.ID {
		t.Fatalf("authorized %+v, want the message", calls)
	}
	if got := e.store.message(own.ID); got.ExternalKey != "git:7" || !got.Redacted() {
		t.Fatalf("deleted own = %+v", got)
	}
	e.newEvents(&seen)

	third, err := e.svc.Messages().Post(as(t, sam), chat.MessageInput{ThreadID: th.ID, ContentMD: "third"})
	if err != nil {
		t.Fatal(err)
	}
	e.newEvents(&seen)
	tests := []struct {
		name  string
		setup func()
		id    uuid.UUID
		kind  error
	}{
		{"unknown", func() {}, uuid.New(), problem.ErrNotFound},
		{"denied", func() { e.authz.denyOn(kernel.ActionMessageDelete, third.ID, problem.ErrForbidden) }, third.ID, problem.ErrForbidden},
		{"failing update", func() {
			e.authz.denyOn(kernel.ActionMessageDelete, third.ID, nil)
			e.store.fail("UpdateMessage", errDB)
		}, third.ID, errDB},
		{"failing redaction", func() { e.redactor.failNext = errDB }, third.ID, errDB},
		{"failing append", func() { e.appender.fail(errDB) }, third.ID, errDB},
	}
	for _, tc := range tests {
		tc.setup()
		err := e.svc.Messages().Delete(as(t, sam), tc.id)
		wantProblem(t, err, tc.kind)
		if got := e.newEvents(&seen); len(got) != 0 {
			t.Errorf("%s: events %v", tc.name, got)
		}
		if got := e.store.message(third.ID); got.ContentMD != "third" || got.Redacted() {
			t.Errorf("%s: message changed to %+v", tc.name, got)
		}
	}
	if err := e.svc.Messages().Delete(t.Context(), third.ID); !errorsIs(err, problem.ErrUnauthenticated) {
		t.Fatalf("without actor = %v", err)
	}
}
