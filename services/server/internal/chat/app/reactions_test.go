package app_test

import (
	"slices"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

func TestReactions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := e.space(t, "Support")
	ch := e.channel(t, sp.ID, "general")
	th, m := e.thread(t, ch, "The printer is jammed")
	seen := len(e.appender.events())
	e.authz.Reset()
	rx := e.svc.Reactions()

	// Sam reacts: reaction.write on the message, one event placed like the message's own.
	if err := rx.Add(as(t, sam), m.ID, ":thumbs_up:"); err != nil {
		t.Fatalf("Add: %v", err)
	}
	if calls := e.authz.Calls(); len(calls) != 1 || calls[0].Action != kernel.ActionReactionWrite ||
		calls[0].Res != (authorize.Resource{Kind: kernel.ResourceMessage, ID: m.ID, SpaceID: sp.ID, ChannelID: ch.ID, ThreadID: th.ID}) {
		t.Fatalf("authorized %+v, want reaction.write on the message", calls)
	}
	evs := e.newEvents(&seen)
	wantEvents(t, evs, placed{typ: "reaction.added", actor: sam, space: sp.ID, channel: ch.ID, thread: th.ID, kind: kernel.ResourceMessage, resource: m.ID})
	if p := payload(evs[0]); len(p) != 5 || p["message_id"] != m.ID.String() || p["thread_id"] != th.ID.String() ||
		p["channel_id"] != ch.ID.String() || p["principal_id"] != sam.String() || p["reaction"] != ":thumbs_up:" {
		t.Fatalf("payload = %v", p)
	}

	// Idempotent: again changes nothing and appends nothing.
	if err := rx.Add(as(t, sam), m.ID, ":thumbs_up:"); err != nil {
		t.Fatalf("Add again: %v", err)
	}
	wantEvents(t, e.newEvents(&seen))

	// Alex makes the same reaction (not a new distinct one) and an emoji: two distinct, the
	// limit of testConfig.
	e.clock.Advance(time2h)
	for _, r := range []string{":thumbs_up:", "\U0001F389"} {
		if err := rx.Add(as(t, alex), m.ID, r); err != nil {
			t.Fatalf("Alex adds %q: %v", r, err)
		}
	}
	if n := len(e.newEvents(&seen)); n != 2 {
		t.Fatalf("%d events, want 2", n)
	}
	// A third distinct reaction is refused; one that exists is still taken.
	err := rx.Add(as(t, sam), m.ID, ":tada:")
	wantProblem(t, err, problem.ErrConflict)
	if !errorsIs(err, domain.ErrTooManyReactions) {
		t.Fatalf("err = %v, want ErrTooManyReactions", err)
	}
	if err := rx.Add(as(t, sam), m.ID, "\U0001F389"); err != nil {
		t.Fatalf("Sam adds an existing reaction at the limit: %v", err)
	}
	wantEvents(t, e.newEvents(&seen), placed{typ: "reaction.added", actor: sam, space: sp.ID, channel: ch.ID, thread: th.ID, kind: kernel.ResourceMessage, resource: m.ID})

	// Reads count them for the reader, in the order first made.
	list, err := e.svc.Messages().List(as(t, alex), th.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []chat.ReactionCount{{Reaction: ":thumbs_up:", Count: 2, Me: true}, {Reaction: "\U0001F389", Count: 2, Me: true}}
	if len(list) != 1 || !slices.Equal(list[0].Reactions, want) {
		t.Fatalf("Alex reads %+v, want %+v", list, want)
	}
	// getMessage counts them like a page of listMessages.
	one, err := e.svc.Messages().Read(as(t, alex), m.ID)
	if err != nil || !slices.Equal(one.Reactions, want) {
		t.Fatalf("Alex reads the message: %+v, %v; want reactions %+v", one.Reactions, err, want)
	}
	if err := rx.Remove(as(t, alex), m.ID, ":thumbs_up:"); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	wantEvents(t, e.newEvents(&seen), placed{typ: "reaction.removed", actor: alex, space: sp.ID, channel: ch.ID, thread: th.ID, kind: kernel.ResourceMessage, resource: m.ID})
	// Removing what one has not made changes nothing.
	if err := rx.Remove(as(t, alex), m.ID, ":thumbs_up:"); err != nil {
		t.Fatalf("Remove again: %v", err)
	}
	if err := rx.Remove(as(t, robin), m.ID, ":heart:"); err != nil {
		t.Fatalf("Remove of a reaction nobody made: %v", err)
	}
	wantEvents(t, e.newEvents(&seen))
	edited, err := e.svc.Messages().Edit(as(t, alex), m.ID, "The printer works again")
	if err != nil {
		t.Fatal(err)
	}
	want = []chat.ReactionCount{{Reaction: ":thumbs_up:", Count: 1, Me: false}, {Reaction: "\U0001F389", Count: 2, Me: true}}
	if !slices.Equal(edited.Reactions, want) {
		t.Fatalf("edited message has %+v, want %+v", edited.Reactions, want)
	}
	seen = len(e.appender.events())

	// Refusals append nothing and store nothing.
	before := e.store.snapshot().reactions
	tests := []struct {
		name     string
		setup    func()
		reaction string
		kind     error
		fields   []string
	}{
		{"bad reaction", func() {}, "thumbs up", problem.ErrValidation, []string{"reaction"}},
		{"two emoji", func() {}, "\U0001F44D\U0001F44D", problem.ErrValidation, []string{"reaction"}},
		{"invisible", func() { e.authz.denyOn(kernel.ActionReactionWrite, m.ID, problem.ErrNotFound) }, ":ok:", problem.ErrNotFound, nil},
		// Who cannot read the message does not learn that the reaction is malformed.
		{"invisible and bad", func() { e.authz.denyOn(kernel.ActionReactionWrite, m.ID, problem.ErrNotFound) }, "bad", problem.ErrNotFound, nil},
		{"viewer", func() { e.authz.denyOn(kernel.ActionReactionWrite, m.ID, problem.ErrForbidden) }, ":ok:", problem.ErrForbidden, nil},
	}
	for _, tc := range tests {
		tc.setup()
		wantProblem(t, rx.Add(as(t, robin), m.ID, tc.reaction), tc.kind, tc.fields...)
		tc.setup()
		wantProblem(t, rx.Remove(as(t, robin), m.ID, tc.reaction), tc.kind, tc.fields...)
	}
	e.authz.denyOn(kernel.ActionReactionWrite, m.ID, nil)
	wantProblem(t, rx.Add(as(t, robin), uuid.New(), ":ok:"), problem.ErrNotFound)
	if got := e.store.snapshot().reactions; !slices.Equal(got, before) {
		t.Fatalf("refusals changed the reactions: %+v, want %+v", got, before)
	}
	wantEvents(t, e.newEvents(&seen))

	// Deleting the message removes its reactions: adding is refused, removing changes nothing.
	if err := e.svc.Messages().Delete(as(t, alex), m.ID); err != nil {
		t.Fatal(err)
	}
	seen = len(e.appender.events())
	wantProblem(t, rx.Add(as(t, sam), m.ID, ":ok:"), domain.ErrMessageDeleted)
	if err := rx.Remove(as(t, sam), m.ID, "\U0001F389"); err != nil {
		t.Fatalf("Remove on a deleted message: %v", err)
	}
	wantEvents(t, e.newEvents(&seen))
	list, err = e.svc.Messages().List(as(t, alex), th.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list[0].Reactions) != 0 {
		t.Fatalf("deleted message has reactions %+v", list[0].Reactions)
	}
}

func TestReactionsInArchivedChannel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := e.space(t, "Support")
	ch := e.channel(t, sp.ID, "general")
	_, m := e.thread(t, ch, "Hello")
	if err := e.svc.Reactions().Add(as(t, sam), m.ID, ":ok:"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Channels().Archive(as(t, alex), ch.ID); err != nil {
		t.Fatal(err)
	}
	seen := len(e.appender.events())
	wantProblem(t, e.svc.Reactions().Add(as(t, sam), m.ID, ":wave:"), domain.ErrChannelArchived)
	wantProblem(t, e.svc.Reactions().Remove(as(t, sam), m.ID, ":ok:"), domain.ErrChannelArchived)
	wantEvents(t, e.newEvents(&seen))
}
