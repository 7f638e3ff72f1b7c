package app_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"bothy.example.com/server/internal/ingest/ingesttest"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/ingest"
	"bothy.example.com/server/internal/ingest/app"
	"bothy.example.com/server/internal/ingest/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/kernel/problem"
)

// The fakes keep one world: chat's threads and messages, the ingest store's rows, the
// principals and grants. fakeTx snapshots it when a transaction starts and restores it when
// the transaction fails, so a failed write leaves nothing behind, as PostgreSQL would.

// world is the state every fake shares.
type world struct {
	mu sync.Mutex
	// chat
	channels map[uuid.UUID]chat.Channel
	threads  map[uuid.UUID]chat.Thread
	messages []chat.Message
	keys     map[string]bool
	// ingest store
	cursors map[string]domain.Cursor // by repository + "/" + section
	records map[string]domain.Record
	// identity and authz
	principals map[uuid.UUID]identity.Principal
	grants     []authz.Grant
	// calls and failures
	writes       int
	failKeys     map[string]error // a chat write with this external key fails
	failStoreOps map[string]error // a store method of this name fails
	prefixCalls  int
}

// testLimits are the ingester's limits in these tests (chat's title rule and the defaults of
// ingest.max_body_bytes and ingest.max_listed_files).
var testLimits = domain.Limits{TitleRunes: 200, BodyBytes: 8000, Files: 20, Mask: ingesttest.Masker()}

func (w *world) snapshot() *world {
	return &world{
		channels: maps.Clone(w.channels), threads: maps.Clone(w.threads), messages: slices.Clone(w.messages),
		keys: maps.Clone(w.keys), cursors: maps.Clone(w.cursors), records: maps.Clone(w.records),
		principals: maps.Clone(w.principals), grants: slices.Clone(w.grants),
	}
}

func (w *world) restore(s *world) {
	w.channels, w.threads, w.messages, w.keys = s.channels, s.threads, s.messages, s.keys
	w.cursors, w.records, w.principals, w.grants = s.cursors, s.records, s.principals, s.grants
}

func newWorld() *world {
	return &world{
		channels: map[uuid.UUID]chat.Channel{}, threads: map[uuid.UUID]chat.Thread{}, keys: map[string]bool{},
		cursors: map[string]domain.Cursor{}, records: map[string]domain.Record{}, principals: map[uuid.UUID]identity.Principal{},
		failKeys: map[string]error{}, failStoreOps: map[string]error{},
	}
}

// fakeTx implements app.Transactor over the world.
type fakeTx struct{ w *world }

type txKey struct{}

func (f fakeTx) RunInTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if ctx.Value(txKey{}) != nil {
		return fn(ctx)
	}
	f.w.mu.Lock()
	snap := f.w.snapshot()
	f.w.mu.Unlock()
	if err := fn(context.WithValue(ctx, txKey{}, true)); err != nil {
		f.w.mu.Lock()
		f.w.restore(snap)
		f.w.mu.Unlock()
		return err
	}
	return nil
}

// fakeChat implements app.Channels, app.Threads and app.Messages. Every write needs the app
// actor with messages:write in ctx and a transaction (the pass opens one per record), except
// the replies of references, which chat runs in a transaction of its own.
type fakeChat struct {
	t *testing.T
	w *world
}

func (f fakeChat) Get(_ context.Context, id uuid.UUID) (chat.Channel, error) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	ch, ok := f.w.channels[id]
	if !ok {
		return chat.Channel{}, fmt.Errorf("chat: channel: %w", problem.ErrNotFound)
	}
	return ch, nil
}

func (f fakeChat) check(ctx context.Context, key, content string) (uuid.UUID, error) {
	a, ok := actor.From(ctx)
	if !ok || a.Kind != actor.KindApp || !a.HasScope(identity.ScopeMessagesWrite) || !a.HasScope(identity.ScopeMessagesRead) {
		f.t.Errorf("chat write as %+v, want the app with its scopes", a)
	}
	if err := f.w.failKeys[key]; err != nil {
		return uuid.Nil, err
	}
	if strings.TrimSpace(content) == "" {
		return uuid.Nil, problem.Validation(problem.FieldError{Field: "content_md", Message: "is required"})
	}
	if key != "" && f.w.keys[key] {
		return uuid.Nil, chat.ErrDuplicateKey
	}
	f.w.keys[key] = true
	f.w.writes++
	return a.PrincipalID, nil
}

func (f fakeChat) Create(ctx context.Context, in chat.ThreadInput) (chat.Thread, chat.Message, error) {
	if ctx.Value(txKey{}) == nil {
		f.t.Errorf("thread %s created outside a transaction", in.ExternalKey)
	}
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	author, err := f.check(ctx, in.ExternalKey, in.ContentMD)
	if err != nil {
		return chat.Thread{}, chat.Message{}, err
	}
	if _, ok := f.w.channels[in.ChannelID]; !ok {
		return chat.Thread{}, chat.Message{}, problem.ErrNotFound
	}
	if len([]rune(in.Title)) > testLimits.TitleRunes {
		return chat.Thread{}, chat.Message{}, problem.Validation(problem.FieldError{Field: "title", Message: "too long"})
	}
	th := chat.Thread{ID: ids.New(), ChannelID: in.ChannelID, Title: in.Title, CreatedBy: author, LastMessageSeq: 1}
	m := chat.Message{ID: ids.New(), ThreadID: th.ID, ChannelID: in.ChannelID, Seq: 1, AuthorID: author, ContentMD: in.ContentMD, ExternalKey: in.ExternalKey}
	f.w.threads[th.ID] = th
	f.w.messages = append(f.w.messages, m)
	return th, m, nil
}

func (f fakeChat) Post(ctx context.Context, in chat.MessageInput) (chat.Message, error) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	author, err := f.check(ctx, in.ExternalKey, in.ContentMD)
	if err != nil {
		return chat.Message{}, err
	}
	th, ok := f.w.threads[in.ThreadID]
	if !ok {
		return chat.Message{}, problem.ErrNotFound
	}
	th.LastMessageSeq++
	f.w.threads[th.ID] = th
	m := chat.Message{ID: ids.New(), ThreadID: th.ID, ChannelID: th.ChannelID, Seq: th.LastMessageSeq, AuthorID: author, ContentMD: in.ContentMD, ExternalKey: in.ExternalKey}
	f.w.messages = append(f.w.messages, m)
	return m, nil
}

// fakeStore implements app.Store.
type fakeStore struct{ w *world }

func (f fakeStore) fail(op string) error {
	if err := f.w.failStoreOps[op]; err != nil {
		return err
	}
	return nil
}

func (f fakeStore) Cursors(_ context.Context, repo string) ([]domain.Cursor, error) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	if err := f.fail("Cursors"); err != nil {
		return nil, err
	}
	var out []domain.Cursor
	for _, c := range f.w.cursors {
		if c.Repository == repo {
			out = append(out, c)
		}
	}
	return out, nil
}

func (f fakeStore) SaveCursor(_ context.Context, c domain.Cursor) error {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	if err := f.fail("SaveCursor"); err != nil {
		return err
	}
	f.w.cursors[c.Repository+"/"+string(c.Section)] = c
	return nil
}

func (f fakeStore) Records(_ context.Context, keys []string) (map[string]domain.Record, error) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	if err := f.fail("Records"); err != nil {
		return nil, err
	}
	out := map[string]domain.Record{}
	for _, k := range keys {
		if r, ok := f.w.records[k]; ok {
			out[k] = r
		}
	}
	return out, nil
}

func (f fakeStore) RecordsWithPrefix(_ context.Context, prefix string, limit int) ([]domain.Record, error) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	f.w.prefixCalls++
	if err := f.fail("RecordsWithPrefix"); err != nil {
		return nil, err
	}
	var out []domain.Record
	for _, k := range slices.Sorted(maps.Keys(f.w.records)) {
		if strings.HasPrefix(k, prefix) && len(out) < limit {
			out = append(out, f.w.records[k])
		}
	}
	return out, nil
}

func (f fakeStore) MergedPullRequests(_ context.Context, shas []string) (map[string]domain.Record, error) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	if err := f.fail("MergedPullRequests"); err != nil {
		return nil, err
	}
	out := map[string]domain.Record{}
	for _, r := range f.w.records {
		if r.MergeCommit != "" && slices.Contains(shas, r.MergeCommit) {
			out[r.MergeCommit] = r
		}
	}
	return out, nil
}

func (f fakeStore) InsertRecords(_ context.Context, records []domain.Record) error {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	if err := f.fail("InsertRecords"); err != nil {
		return err
	}
	for _, r := range records {
		if _, ok := f.w.records[r.Key]; ok {
			return fmt.Errorf("record %s exists", r.Key)
		}
		f.w.records[r.Key] = r
	}
	return nil
}

// fakeIdentity implements app.Directory and app.Principals; fakeGrants app.Grants.
type fakeIdentity struct{ w *world }

func (f fakeIdentity) ByHandles(_ context.Context, handles []string) (map[string]identity.PrincipalRef, error) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	out := map[string]identity.PrincipalRef{}
	for _, p := range f.w.principals {
		if slices.Contains(handles, p.Handle) && p.DeactivatedAt.IsZero() {
			out[p.Handle] = p.Ref()
		}
	}
	return out, nil
}

func (f fakeIdentity) CreateApp(_ context.Context, in identity.AppInput) (identity.Principal, error) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	for _, p := range f.w.principals {
		if p.Handle == in.Handle {
			return identity.Principal{}, identity.ErrHandleTaken
		}
	}
	p := identity.Principal{ID: ids.New(), Kind: actor.KindApp, DisplayName: in.DisplayName, Handle: in.Handle, Scopes: slices.Sorted(slices.Values(in.Scopes))}
	f.w.principals[p.ID] = p
	return p, nil
}

func (f fakeIdentity) Get(_ context.Context, id uuid.UUID) (identity.Principal, error) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	p, ok := f.w.principals[id]
	if !ok {
		return identity.Principal{}, identity.ErrPrincipalNotFound
	}
	return p, nil
}

type fakeGrants struct{ w *world }

func (f fakeGrants) Grant(ctx context.Context, in authz.GrantInput) (authz.Grant, error) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	who, ok := actor.From(ctx)
	if !ok {
		return authz.Grant{}, problem.ErrUnauthenticated
	}
	for _, g := range f.w.grants {
		if g.PrincipalID == in.PrincipalID && g.ResourceID == in.ResourceID {
			return authz.Grant{}, problem.ErrConflict
		}
	}
	g := authz.Grant{ID: ids.New(), PrincipalID: in.PrincipalID, ResourceKind: in.ResourceKind, ResourceID: in.ResourceID, Role: in.Role, CreatedBy: who.PrincipalID}
	f.w.grants = append(f.w.grants, g)
	return g, nil
}

func (f fakeGrants) List(_ context.Context, id uuid.UUID) ([]authz.Grant, error) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	var out []authz.Grant
	for _, g := range f.w.grants {
		if g.PrincipalID == id {
			out = append(out, g)
		}
	}
	return out, nil
}

// fakeGit implements app.Git over a linear history, oldest first.
type fakeGit struct {
	repo    domain.RawRepository
	commits []domain.RawCommit
	files   map[string][]string
	// logs counts the calls of Log by since.
	logs   []string
	failed error
}

func (f *fakeGit) Repository(context.Context) (domain.RawRepository, error) {
	if f.failed != nil {
		return domain.RawRepository{}, f.failed
	}
	return f.repo, nil
}

func (f *fakeGit) after(since string) ([]domain.RawCommit, error) {
	if since == "" {
		return f.commits, nil
	}
	for i, c := range f.commits {
		if c.SHA == since {
			return f.commits[i+1:], nil
		}
	}
	return nil, &domain.GitError{Phase: "log", Stderr: "fatal: bad revision '" + since + "..HEAD'", Err: errors.New("exit status 128"), Mask: ingesttest.Masker()}
}

func (f *fakeGit) Log(_ context.Context, since string) ([]domain.RawCommit, []error, error) {
	f.logs = append(f.logs, since)
	c, err := f.after(since)
	return c, nil, err
}

func (f *fakeGit) TouchedFiles(_ context.Context, since string) (map[string][]string, error) {
	c, err := f.after(since)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, x := range c {
		out[x.SHA] = f.files[x.SHA]
	}
	return out, nil
}

// fakeSource implements app.PRSource and app.IssueSource like gh: the records updated at or
// after the floor, sorted by updated time, at most pageSize of them (0: all, never full).
type fakeSource struct {
	name     string
	pageSize int
	prs      []domain.RawPR
	issues   []domain.RawIssue
	floors   []time.Time
	failed   error
}

func (f *fakeSource) Name() string { return f.name }

func page[T any](f *fakeSource, floor time.Time, all []T, updated func(T) string) (domain.SourcePage[T], error) {
	f.floors = append(f.floors, floor)
	if f.failed != nil {
		return domain.SourcePage[T]{}, f.failed
	}
	var out []T
	for _, r := range all {
		t, ok := domain.ParseTime(updated(r))
		if !ok || !t.Before(floor) {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return updated(out[i]) < updated(out[j]) })
	if f.pageSize > 0 && len(out) >= f.pageSize {
		return domain.SourcePage[T]{Items: out[:f.pageSize], Full: true}, nil
	}
	return domain.SourcePage[T]{Items: out}, nil
}

func (f *fakeSource) PullRequests(_ context.Context, floor time.Time) (domain.SourcePage[domain.RawPR], error) {
	return page(f, floor, f.prs, func(p domain.RawPR) string { return p.UpdatedAt })
}

func (f *fakeSource) Issues(_ context.Context, floor time.Time) (domain.SourcePage[domain.RawIssue], error) {
	return page(f, floor, f.issues, func(i domain.RawIssue) string { return i.UpdatedAt })
}

// env is one test's world and the Service over it.
type env struct {
	t       *testing.T
	w       *world
	chat    fakeChat
	store   fakeStore
	git     *fakeGit
	prs     *fakeSource
	issues  *fakeSource
	clock   *clock.Fake
	logs    *bytes.Buffer
	channel uuid.UUID
	// progress records every Progress call.
	progress []ingest.Progress
}

var epoch = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// at is epoch plus n minutes, as gh prints it.
func at(n int) string { return epoch.Add(time.Duration(n) * time.Minute).Format(time.RFC3339) }

// sha makes a commit id from n.
func sha(n int) string { return fmt.Sprintf("abc%04d", n) + strings.Repeat("0", 33) }

func newEnv(t *testing.T) *env {
	t.Helper()
	w := newWorld()
	e := &env{
		t: t, w: w, chat: fakeChat{t: t, w: w}, store: fakeStore{w: w},
		git: &fakeGit{repo: domain.RawRepository{RemoteURL: "https://example.com/alex/bothy.git", TopLevel: "/src/bothy", Branch: "main", HasCommits: true}, files: map[string][]string{}},
		prs: &fakeSource{name: "file"}, issues: &fakeSource{name: "file"},
		clock: clock.NewFake(epoch), logs: &bytes.Buffer{}, channel: ids.New(),
	}
	w.channels[e.channel] = chat.Channel{ID: e.channel, SpaceID: ids.New(), Kind: chat.ChannelStandard, Name: "dev"}
	return e
}

func (e *env) service(mod ...func(*app.Deps)) *app.Service {
	e.t.Helper()
	id := fakeIdentity{w: e.w}
	d := app.Deps{
		Store: e.store, Tx: fakeTx{w: e.w}, Channels: e.chat, Threads: e.chat, Messages: e.chat,
		Directory: id, Principals: id, Grants: fakeGrants{w: e.w}, Git: e.git, PRs: e.prs, Issues: e.issues,
		Clock: e.clock, Logger: slog.New(slog.NewJSONHandler(e.logs, nil)), Limits: testLimits,
	}
	for _, m := range mod {
		m(&d)
	}
	s, err := app.New(d)
	if err != nil {
		e.t.Fatalf("app.New: %v", err)
	}
	return s
}

// run runs one pass with the budget and returns its report; an error fails the test.
func (e *env) run(maxItems int, mod ...func(*app.Deps)) ingest.Report {
	e.t.Helper()
	rep, err := e.service(mod...).Run(e.t.Context(), ingest.Pass{ChannelID: e.channel, MaxItems: maxItems, Progress: func(p ingest.Progress) { e.progress = append(e.progress, p) }})
	if err != nil {
		e.t.Fatalf("Run: %v", err)
	}
	return rep
}

// messageByKey returns the chat message with the external key.
func (e *env) messageByKey(key string) (chat.Message, bool) {
	e.w.mu.Lock()
	defer e.w.mu.Unlock()
	for _, m := range e.w.messages {
		if m.ExternalKey == key {
			return m, true
		}
	}
	return chat.Message{}, false
}

// threadMessages returns the messages of a thread in seq order.
func (e *env) threadMessages(id uuid.UUID) []chat.Message {
	e.w.mu.Lock()
	defer e.w.mu.Unlock()
	var out []chat.Message
	for _, m := range e.w.messages {
		if m.ThreadID == id {
			out = append(out, m)
		}
	}
	return out
}

// order returns the external keys of the messages in the order they were written.
func (e *env) order() []string {
	e.w.mu.Lock()
	defer e.w.mu.Unlock()
	var out []string
	for _, m := range e.w.messages {
		out = append(out, m.ExternalKey)
	}
	return out
}

// writes counts the chat writes so far.
func (e *env) writes() int {
	e.w.mu.Lock()
	defer e.w.mu.Unlock()
	return e.w.writes
}

// cursor returns the stored cursor of a section of alex/bothy.
func (e *env) cursor(s ingest.Section) string {
	e.w.mu.Lock()
	defer e.w.mu.Unlock()
	return e.w.cursors["alex/bothy/"+string(s)].Position
}

// appPrincipal returns the app the passes act as.
func (e *env) appPrincipal() identity.Principal {
	e.w.mu.Lock()
	defer e.w.mu.Unlock()
	for _, p := range e.w.principals {
		if p.Handle == app.PrincipalHandle {
			return p
		}
	}
	e.t.Fatal("no app principal")
	return identity.Principal{}
}

// grantOn returns the grants on the channel.
func (e *env) grantsOnChannel() []authz.Grant {
	e.w.mu.Lock()
	defer e.w.mu.Unlock()
	var out []authz.Grant
	for _, g := range e.w.grants {
		if g.ResourceKind == kernel.ResourceChannel && g.ResourceID == e.channel {
			out = append(out, g)
		}
	}
	return out
}
