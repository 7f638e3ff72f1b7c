package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	gosync "sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"bothy.example.com/server/internal/authz"
	authzpg "bothy.example.com/server/internal/authz/adapters/postgres"
	authzapp "bothy.example.com/server/internal/authz/app"
	"bothy.example.com/server/internal/chat"
	chatpg "bothy.example.com/server/internal/chat/adapters/postgres"
	"bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/identity"
	identitypg "bothy.example.com/server/internal/identity/adapters/postgres"
	identityapp "bothy.example.com/server/internal/identity/app"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/pgtest"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	syncdomain "bothy.example.com/server/internal/sync/domain"
)

// stack is one test's migrated database with the chat use cases over the real adapters of
// every module they touch: chat's store (also authz's channel directory), the authorizer and
// grants of authz, identity, the instance counters and the sync appender and redactor.
type stack struct {
	pool     *pgxpool.Pool
	instance *instancepg.Store
	reader   *syncpg.Reader
	identity *identityapp.Service
	grants   *authzapp.Grants
	svc      *app.Service
	instID   uuid.UUID
}

func newStack(t *testing.T) *stack {
	t.Helper()
	pool := pgtest.New(t)
	runner := tx.NewRunner(pool)
	s := &stack{pool: pool, instance: instancepg.New(runner), reader: syncpg.NewReader(runner)}
	info, err := s.instance.Ensure(t.Context(), "bothy")
	if err != nil {
		t.Fatalf("instance: %v", err)
	}
	s.instID = info.ID
	s.identity, err = identityapp.New(identityapp.Deps{
		Store: identitypg.New(runner), Tx: runner, Clock: clock.System(), Logger: slog.New(slog.DiscardHandler),
		Config:   identityapp.Config{TokenTTL: time.Hour, LastUsedFlushInterval: time.Minute, LastUsedFinalFlushTimeout: 5 * time.Second},
		Appender: identityPorts{}, Owners: identityPorts{}, Instance: identityPorts{},
	})
	if err != nil {
		t.Fatalf("identity: %v", err)
	}
	store := chatpg.New(runner)
	grantStore := authzpg.New(runner)
	authorizer, err := authzapp.NewAuthorizer(authzapp.AuthorizerDeps{
		Grants: grantStore, Versions: s.instance, Directory: store, CacheSize: 100,
		Logger: slog.New(slog.DiscardHandler), Registerer: prometheus.NewRegistry(),
	})
	if err != nil {
		t.Fatalf("authorizer: %v", err)
	}
	appender, err := syncpg.NewAppender(runner, s.instance, syncpg.AppendConfig{Concurrency: 2})
	if err != nil {
		t.Fatalf("appender: %v", err)
	}
	s.grants, err = authzapp.NewGrants(authzapp.GrantsDeps{
		Runner: runner, Store: grantStore, Counters: s.instance, Appender: appender, Instance: s.instance,
		Directory: store, Principals: s.identity, Authorizer: authorizer, PageSize: 100,
	})
	if err != nil {
		t.Fatalf("grants: %v", err)
	}
	s.svc, err = app.New(app.Deps{
		Store: store, Tx: runner, Appender: appender, Redactor: appender, Authorizer: authorizer,
		Grants: s.grants, Principals: s.identity, OwnReads: &fakeOwnReads{realTx: true}, Readers: grantStore, Clock: clock.System(),
		Config: app.Config{MaxMessageBytes: 16384, MessagesPageSize: 100, MaxDMParticipants: 8, MaxReactionsPerMessage: 20, SearchPageSize: 20, SearchQueryMaxChars: 200, SearchExcerptWords: 30, MembersPageSize: 100},
	})
	if err != nil {
		t.Fatalf("chat: %v", err)
	}
	return s
}

// person creates a person with the handle and returns its id.
func (s *stack) person(t *testing.T, handle string) uuid.UUID {
	t.Helper()
	p, err := s.identity.CreatePerson(t.Context(), identity.PersonInput{DisplayName: handle, Handle: handle, Email: handle + "@example.com"})
	if err != nil {
		t.Fatalf("create person %s: %v", handle, err)
	}
	return p.ID
}

// grant gives p the role on the resource (acting as p; authz.Grants authorizes nothing).
func (s *stack) grant(t *testing.T, p uuid.UUID, kind kernel.ResourceKind, id uuid.UUID, role authz.Role) {
	t.Helper()
	if _, err := s.grants.Grant(as(t, p), authz.GrantInput{PrincipalID: p, ResourceKind: kind, ResourceID: id, Role: role}); err != nil {
		t.Fatalf("grant %s on %s: %v", role, kind, err)
	}
}

func (s *stack) head(t *testing.T) int64 {
	t.Helper()
	h, err := s.instance.EventSeq(t.Context())
	if err != nil {
		t.Fatalf("event seq: %v", err)
	}
	return h
}

func (s *stack) eventsAfter(t *testing.T, seq int64) []syncdomain.StoredEvent {
	t.Helper()
	evs, err := s.reader.EventsAfter(t.Context(), seq, 10_000)
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	return evs
}

func types(evs []syncdomain.StoredEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// world is an owner (alex) with a space, a channel and a thread, a space member (sam) and a
// space viewer (robin).
type world struct {
	s                *stack
	alex, sam, robin uuid.UUID
	space            chat.Space
	channel          chat.Channel
	thread           chat.Thread
	first            chat.Message
}

func newWorld(t *testing.T) *world {
	t.Helper()
	s := newStack(t)
	w := &world{s: s, alex: s.person(t, "alex"), sam: s.person(t, "sam"), robin: s.person(t, "robin")}
	s.grant(t, w.alex, kernel.ResourceInstance, uuid.Nil, authz.RoleOwner)
	var err error
	if w.space, err = s.svc.Spaces().Create(as(t, w.alex), chat.SpaceInput{Name: "Support"}); err != nil {
		t.Fatalf("space: %v", err)
	}
	if w.channel, err = s.svc.Channels().Create(as(t, w.alex), chat.ChannelInput{SpaceID: w.space.ID, Name: "general"}); err != nil {
		t.Fatalf("channel: %v", err)
	}
	s.grant(t, w.sam, kernel.ResourceSpace, w.space.ID, authz.RoleMember)
	s.grant(t, w.robin, kernel.ResourceSpace, w.space.ID, authz.RoleViewer)
	if w.thread, w.first, err = s.svc.Threads().Create(as(t, w.alex), chat.ThreadInput{ChannelID: w.channel.ID, ContentMD: "Welcome"}); err != nil {
		t.Fatalf("thread: %v", err)
	}
	return w
}

// TestEightConcurrentPostersStack: eight posters into one thread through the whole stack get
// consecutive seqs, and the log has exactly one message.created per message, with its seq.
func TestEightConcurrentPostersStack(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	head := w.s.head(t)
	const posters, each = 8, 4
	var (
		wg   gosync.WaitGroup
		mu   gosync.Mutex
		got  = map[uuid.UUID]int64{}
		errs []error
	)
	for i := range posters {
		who := []uuid.UUID{w.alex, w.sam}[i%2]
		wg.Go(func() {
			for range each {
				m, err := w.s.svc.Messages().Post(as(t, who), chat.MessageInput{ThreadID: w.thread.ID, ContentMD: "busy"})
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					got[m.ID] = m.Seq
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("post: %v", errs)
	}
	var seqs []int64
	for _, s := range got {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	for i, s := range seqs {
		if s != int64(i+2) {
			t.Fatalf("seqs = %v, want 2..%d without gap or duplicate", seqs, posters*each+1)
		}
	}
	evs := w.s.eventsAfter(t, head)
	if len(evs) != posters*each {
		t.Fatalf("%d events, want %d", len(evs), posters*each)
	}
	for _, e := range evs {
		var p struct {
			MessageID uuid.UUID `json:"message_id"`
			Seq       int64     `json:"seq"`
		}
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if e.Type != app.EventMessageCreated || got[p.MessageID] != p.Seq || e.ThreadID != w.thread.ID || e.ChannelID != w.channel.ID || e.SpaceID != w.space.ID {
			t.Fatalf("event %+v (payload %s) does not match a posted message", e, e.Payload)
		}
	}
	list, err := w.s.svc.Messages().List(as(t, w.robin), w.thread.ID, 0, 0)
	if err != nil || len(list) != posters*each+1 {
		t.Fatalf("List = %d messages, %v", len(list), err)
	}
}

// TestDeleteRedactsTheMessageAndItsEvents: after deleteMessage, neither the row nor any
// event of the message holds its text (or its mentions); message.deleted holds none either.
func TestDeleteRedactsTheMessageAndItsEvents(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	head := w.s.head(t)
	m, err := w.s.svc.Messages().Post(as(t, w.sam), chat.MessageInput{ThreadID: w.thread.ID, ContentMD: "the secret is 42, @robin"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.MentionIDs, []uuid.UUID{w.robin}) {
		t.Fatalf("mentions = %v, want robin (a viewer reads the channel)", m.MentionIDs)
	}
	if _, err := w.s.svc.Messages().Edit(as(t, w.sam), m.ID, "the secret is 43"); err != nil {
		t.Fatal(err)
	}
	if err := w.s.svc.Messages().Delete(as(t, w.sam), m.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	list, err := w.s.svc.Messages().List(as(t, w.sam), w.thread.ID, 1, 0)
	if err != nil || len(list) != 1 || list[0].ContentMD != "" || !list[0].Redacted() || list[0].MentionIDs != nil {
		t.Fatalf("listed after delete = %+v, %v", list, err)
	}
	evs := w.s.eventsAfter(t, head)
	if want := []string{"message.created", "message.edited", "message.deleted"}; !slices.Equal(types(evs), want) {
		t.Fatalf("events = %v, want %v", types(evs), want)
	}
	for _, e := range evs[:2] {
		if !e.Redacted {
			t.Errorf("%s is not redacted", e.Type)
		}
		var p map[string]any
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if _, ok := p["content_md"]; ok {
			t.Errorf("%s still carries text: %s", e.Type, e.Payload)
		}
		if _, ok := p["mention_ids"]; ok {
			t.Errorf("%s still carries mentions: %s", e.Type, e.Payload)
		}
	}
	if evs[2].Redacted || evs[2].ActorID != w.sam || evs[2].ResourceID != m.ID {
		t.Errorf("message.deleted = %+v", evs[2])
	}
	counts, err := w.s.svc.Mentions().CountUnread(t.Context(), w.robin, []uuid.UUID{w.channel.ID}, nil)
	if err != nil || len(counts) != 0 {
		t.Fatalf("mentions of a deleted message still count: %v, %v", counts, err)
	}
}

// TestPolicyThroughTheStack: the use cases ask the real authorizer the right questions.
func TestPolicyThroughTheStack(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	svc := w.s.svc
	outsider := w.s.person(t, "outsider")

	own, err := svc.Messages().Post(as(t, w.sam), chat.MessageInput{ThreadID: w.thread.ID, ContentMD: "mine, cc @outsider"})
	if err != nil {
		t.Fatalf("member posts: %v", err)
	}
	if own.MentionIDs != nil {
		t.Errorf("mentions = %v: someone who cannot read the channel was recorded", own.MentionIDs)
	}
	tests := []struct {
		name string
		do   func() error
		want error
	}{
		{"viewer posts", func() error {
			_, err := svc.Messages().Post(as(t, w.robin), chat.MessageInput{ThreadID: w.thread.ID, ContentMD: "hi"})
			return err
		}, problem.ErrForbidden},
		{"outsider posts", func() error {
			_, err := svc.Messages().Post(as(t, outsider), chat.MessageInput{ThreadID: w.thread.ID, ContentMD: "hi"})
			return err
		}, problem.ErrNotFound},
		{"outsider lists", func() error {
			_, err := svc.Messages().List(as(t, outsider), w.thread.ID, 0, 0)
			return err
		}, problem.ErrNotFound},
		{"member edits own", func() error {
			_, err := svc.Messages().Edit(as(t, w.sam), own.ID, "mine, edited")
			return err
		}, nil},
		{"member edits someone else's", func() error {
			_, err := svc.Messages().Edit(as(t, w.sam), w.first.ID, "hijacked")
			return err
		}, problem.ErrForbidden},
		{"member deletes someone else's", func() error { return svc.Messages().Delete(as(t, w.sam), w.first.ID) }, problem.ErrForbidden},
		{"outsider deletes", func() error { return svc.Messages().Delete(as(t, outsider), own.ID) }, problem.ErrNotFound},
		{"owner moderates", func() error {
			_, err := svc.Messages().Edit(as(t, w.alex), own.ID, "moderated")
			return err
		}, nil},
		{"member creates a channel", func() error {
			_, err := svc.Channels().Create(as(t, w.sam), chat.ChannelInput{SpaceID: w.space.ID, Name: "random"})
			return err
		}, problem.ErrForbidden},
		{"member creates a space", func() error {
			_, err := svc.Spaces().Create(as(t, w.sam), chat.SpaceInput{Name: "Marketing"})
			return err
		}, problem.ErrForbidden},
		{"outsider archives the channel", func() error {
			_, err := svc.Channels().Archive(as(t, outsider), w.channel.ID)
			return err
		}, problem.ErrNotFound},
		{"viewer starts a thread", func() error {
			_, _, err := svc.Threads().Create(as(t, w.robin), chat.ThreadInput{ChannelID: w.channel.ID, ContentMD: "hi"})
			return err
		}, problem.ErrForbidden},
	}
	for _, tc := range tests {
		if err := tc.do(); !errors.Is(err, tc.want) && (err != nil || tc.want != nil) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}

	views, err := svc.Spaces().List(as(t, w.sam))
	if err != nil || len(views) != 1 || views[0].Level != authz.RoleMember || len(views[0].Capabilities) != 0 {
		t.Fatalf("sam's spaces = %+v, %v; want Support as a member without capabilities", views, err)
	}
	views, err = svc.Spaces().List(as(t, w.alex))
	if err != nil || len(views) != 1 || views[0].Level != authz.RoleOwner || len(views[0].Capabilities) != 4 {
		t.Fatalf("alex's spaces = %+v, %v", views, err)
	}
	if views, err := svc.Spaces().List(as(t, outsider)); err != nil || len(views) != 0 {
		t.Fatalf("outsider's spaces = %+v, %v", views, err)
	}
	channels, err := svc.Channels().ListInSpace(as(t, w.robin), w.space.ID)
	if err != nil || len(channels) != 1 || channels[0].Level != authz.RoleViewer || len(channels[0].Capabilities) != 0 {
		t.Fatalf("robin's channels = %+v, %v", channels, err)
	}
	channels, err = svc.Channels().ListInSpace(as(t, w.sam), w.space.ID)
	want := []kernel.Action{kernel.ActionDraftWrite, kernel.ActionMessageCreate, kernel.ActionReadStateWrite, kernel.ActionThreadCreate}
	if err != nil || len(channels) != 1 || !slices.Equal(channels[0].Capabilities, want) {
		t.Fatalf("sam's channels = %+v, %v; want %v", channels, err, want)
	}
	if _, err := svc.Channels().ListInSpace(as(t, outsider), w.space.ID); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("outsider lists channels = %v", err)
	}
}

// TestDirectMessageThroughTheStack: opening a direct message grants its participants, who may
// then post in it; others cannot see it; the same set opens the same channel.
func TestDirectMessageThroughTheStack(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	svc := w.s.svc
	head := w.s.head(t)
	dm, created, err := svc.Channels().CreateDirect(as(t, w.sam), []uuid.UUID{w.robin})
	if err != nil || !created {
		t.Fatalf("CreateDirect = %v, %v", created, err)
	}
	evs := w.s.eventsAfter(t, head)
	if want := []string{"channel.created", "grant.created", "permissions.changed", "grant.created", "permissions.changed"}; !slices.Equal(types(evs), want) {
		t.Fatalf("events = %v, want %v", types(evs), want)
	}
	if evs[0].SpaceID != uuid.Nil || evs[0].ChannelID != dm.ID || evs[0].ActorID != w.sam {
		t.Fatalf("channel.created = %+v", evs[0])
	}
	if _, _, err := svc.Threads().Create(as(t, w.robin), chat.ThreadInput{ChannelID: dm.ID, ContentMD: "hi @sam"}); err != nil {
		t.Fatalf("participant starts a thread: %v", err)
	}
	visible, err := svc.Channels().ListVisible(as(t, w.robin))
	if err != nil {
		t.Fatal(err)
	}
	var ids []uuid.UUID
	for _, v := range visible {
		ids = append(ids, v.Channel.ID)
	}
	if !slices.Equal(ids, []uuid.UUID{dm.ID, w.channel.ID}) {
		t.Fatalf("robin's visible channels = %v, want the direct message and general", ids)
	}
	outsider := w.s.person(t, "outsider")
	if _, _, err := svc.Threads().Create(as(t, outsider), chat.ThreadInput{ChannelID: dm.ID, ContentMD: "hi"}); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("outsider in the direct message = %v, want not found", err)
	}

	head = w.s.head(t)
	again, created, err := svc.Channels().CreateDirect(as(t, w.robin), []uuid.UUID{w.sam, w.robin})
	if err != nil || created || again.ID != dm.ID {
		t.Fatalf("CreateDirect again = %+v, %v, %v", again, created, err)
	}
	if got := w.s.eventsAfter(t, head); len(got) != 0 {
		t.Fatalf("reopening appended %v", types(got))
	}
	_, _, err = svc.Channels().CreateDirect(as(t, w.sam), []uuid.UUID{uuid.New()})
	wantProblem(t, err, problem.ErrValidation, "participant_ids")
}

// TestArchiveThroughTheStack: archived channels take no new messages and leave the listings.
func TestArchiveThroughTheStack(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	svc := w.s.svc
	head := w.s.head(t)
	if _, err := svc.Channels().Archive(as(t, w.alex), w.channel.ID); err != nil {
		t.Fatalf("Archive: %v", err)
	}
	if _, err := svc.Messages().Post(as(t, w.sam), chat.MessageInput{ThreadID: w.thread.ID, ContentMD: "late"}); !errors.Is(err, problem.ErrConflict) {
		t.Fatalf("post into an archived channel = %v, want conflict", err)
	}
	if th, _ := svc.Threads().Get(t.Context(), w.thread.ID); th.LastMessageSeq != 1 {
		t.Fatalf("a refused post took seq %d", th.LastMessageSeq)
	}
	if _, err := svc.Spaces().Archive(as(t, w.alex), w.space.ID); err != nil {
		t.Fatalf("Archive space: %v", err)
	}
	if _, err := svc.Channels().Create(as(t, w.alex), chat.ChannelInput{SpaceID: w.space.ID, Name: "random"}); !errors.Is(err, problem.ErrConflict) {
		t.Fatalf("channel in an archived space = %v, want conflict", err)
	}
	if got := types(w.s.eventsAfter(t, head)); !slices.Equal(got, []string{"channel.archived", "space.archived"}) {
		t.Fatalf("events = %v", got)
	}
	if views, err := svc.Spaces().List(as(t, w.alex)); err != nil || len(views) != 0 {
		t.Fatalf("spaces after archiving = %+v, %v", views, err)
	}
	if views, err := svc.Channels().ListVisible(as(t, w.alex)); err != nil || len(views) != 0 {
		t.Fatalf("channels after archiving = %+v, %v", views, err)
	}
}

// TestConcurrentOpenersOfOneDirectMessage: the same set opened at once gives one channel and
// one set of grants.
func TestConcurrentOpenersOfOneDirectMessage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var (
		wg      gosync.WaitGroup
		mu      gosync.Mutex
		created int
		chans   = map[uuid.UUID]bool{}
		errs    []error
	)
	for i := range 4 {
		who, other := w.sam, w.robin
		if i%2 == 1 {
			who, other = other, who
		}
		wg.Go(func() {
			ch, ok, err := w.s.svc.Channels().CreateDirect(as(t, who), []uuid.UUID{other})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			chans[ch.ID] = true
			if ok {
				created++
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 || created != 1 || len(chans) != 1 {
		t.Fatalf("openers: created %d, channels %v, errors %v; want one channel", created, chans, errs)
	}
	gs, err := w.s.grants.List(context.Background(), w.robin)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range gs {
		if chans[g.ResourceID] {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("robin holds %d grants on the direct message, want 1", n)
	}
}

// identityPorts are identity's event ports for a test that does not look at identity's
// events: the appender drops them, no principal owns the instance, the instance is one id.
type identityPorts struct{}

func (identityPorts) Append(context.Context, ...kernel.Event) error { return nil }

func (identityPorts) InstanceOwners(context.Context) ([]uuid.UUID, error) { return nil, nil }

func (identityPorts) InstanceID(context.Context) (uuid.UUID, error) {
	return uuid.MustParse("0190a6b2-7c1e-7d3a-9f00-0000000000aa"), nil
}
