package app_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	gosync "sync"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/chat/domain"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/authorize/authorizetest"
	"bothy.example.com/server/internal/kernel/problem"
	syncdomain "bothy.example.com/server/internal/sync/domain"
)

// fakeStore is an in-memory app.Store with the adapter's rules (case-insensitive channel names
// unique per space among channels that are not archived, one direct message per key, unique
// external keys, seqs advanced one by one). The fake transaction snapshots it when a
// transaction starts and restores the snapshot when it fails, so a failed use case leaves
// nothing behind. fail plants the error of a method's next call.
type fakeStore struct {
	mu       gosync.Mutex
	state    storeState
	failNext map[string]error
	calls    map[string]int
}

type storeState struct {
	spaces   map[uuid.UUID]chat.Space
	channels map[uuid.UUID]chat.Channel
	dmKeys   map[string]uuid.UUID
	threads  map[uuid.UUID]chat.Thread
	messages map[uuid.UUID]chat.Message
	// reactions in the order they were made.
	reactions []app.Reaction
}

func (s storeState) clone() storeState {
	out := storeState{
		spaces: maps.Clone(s.spaces), channels: maps.Clone(s.channels), dmKeys: maps.Clone(s.dmKeys),
		threads: maps.Clone(s.threads), messages: maps.Clone(s.messages), reactions: slices.Clone(s.reactions),
	}
	for id, c := range out.channels {
		c.ParticipantIDs = slices.Clone(c.ParticipantIDs)
		out.channels[id] = c
	}
	for id, m := range out.messages {
		m.MentionIDs = slices.Clone(m.MentionIDs)
		out.messages[id] = m
	}
	return out
}

func newFakeStore() *fakeStore {
	return &fakeStore{
		state: storeState{
			spaces: map[uuid.UUID]chat.Space{}, channels: map[uuid.UUID]chat.Channel{}, dmKeys: map[string]uuid.UUID{},
			threads: map[uuid.UUID]chat.Thread{}, messages: map[uuid.UUID]chat.Message{},
		},
		failNext: map[string]error{},
		calls:    map[string]int{},
	}
}

// call counts a call of method and returns the error planted for it, once. Callers hold mu.
func (f *fakeStore) call(method string) error {
	f.calls[method]++
	err := f.failNext[method]
	delete(f.failNext, method)
	return err
}

func (f *fakeStore) fail(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failNext[method] = err
}

func (f *fakeStore) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

func (f *fakeStore) snapshot() storeState {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state.clone()
}

func (f *fakeStore) restore(s storeState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state = s
}

func (f *fakeStore) message(id uuid.UUID) chat.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state.messages[id]
}

func (f *fakeStore) thread(id uuid.UUID) chat.Thread {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state.threads[id]
}

func (f *fakeStore) sizes() [5]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.state
	return [5]int{len(s.spaces), len(s.channels), len(s.dmKeys), len(s.threads), len(s.messages)}
}

func (f *fakeStore) InsertSpace(_ context.Context, s chat.Space) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("InsertSpace"); err != nil {
		return err
	}
	f.state.spaces[s.ID] = s
	return nil
}

func (f *fakeStore) Space(_ context.Context, id uuid.UUID) (chat.Space, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Space"); err != nil {
		return chat.Space{}, err
	}
	s, ok := f.state.spaces[id]
	if !ok {
		return chat.Space{}, problem.ErrNotFound
	}
	return s, nil
}

func (f *fakeStore) Spaces(_ context.Context, flt app.SpaceFilter) ([]chat.Space, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Spaces"); err != nil {
		return nil, err
	}
	var out []chat.Space
	for _, s := range f.state.spaces {
		if s.ArchivedAt.IsZero() && (flt.All || slices.Contains(flt.SpaceIDs, s.ID)) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b chat.Space) int { return cmp.Or(strings.Compare(a.Name, b.Name), compareIDs(a.ID, b.ID)) })
	return out, nil
}

func (f *fakeStore) UpdateSpace(_ context.Context, id uuid.UUID, change func(*chat.Space) (bool, error)) (chat.Space, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("UpdateSpace"); err != nil {
		return chat.Space{}, err
	}
	s, ok := f.state.spaces[id]
	if !ok {
		return chat.Space{}, problem.ErrNotFound
	}
	changed, err := change(&s)
	if err != nil {
		return chat.Space{}, err
	}
	if changed {
		f.state.spaces[id] = s
	}
	return s, nil
}

func (f *fakeStore) InsertChannel(_ context.Context, c chat.Channel) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("InsertChannel"); err != nil {
		return err
	}
	for _, o := range f.state.channels {
		if o.SpaceID == c.SpaceID && o.ArchivedAt.IsZero() && strings.EqualFold(o.Name, c.Name) {
			return domain.ErrChannelNameTaken
		}
	}
	f.state.channels[c.ID] = c
	return nil
}

func (f *fakeStore) InsertDirect(_ context.Context, c chat.Channel, key string) (chat.Channel, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("InsertDirect"); err != nil {
		return chat.Channel{}, false, err
	}
	if id, ok := f.state.dmKeys[key]; ok {
		return f.state.channels[id], false, nil
	}
	f.state.dmKeys[key] = c.ID
	f.state.channels[c.ID] = c
	return c, true, nil
}

func (f *fakeStore) Channel(_ context.Context, id uuid.UUID) (chat.Channel, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Channel"); err != nil {
		return chat.Channel{}, err
	}
	c, ok := f.state.channels[id]
	if !ok {
		return chat.Channel{}, problem.ErrNotFound
	}
	return c, nil
}

func (f *fakeStore) ChannelsInSpace(_ context.Context, spaceID uuid.UUID) ([]chat.Channel, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("ChannelsInSpace"); err != nil {
		return nil, err
	}
	var out []chat.Channel
	for _, c := range f.state.channels {
		if c.SpaceID == spaceID && c.Kind == chat.ChannelStandard && c.ArchivedAt.IsZero() {
			out = append(out, c)
		}
	}
	sortChannels(out)
	return out, nil
}

func (f *fakeStore) Channels(_ context.Context, flt app.ChannelFilter) ([]chat.Channel, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Channels"); err != nil {
		return nil, err
	}
	var out []chat.Channel
	for _, c := range f.state.channels {
		if !c.ArchivedAt.IsZero() {
			continue
		}
		switch c.Kind {
		case chat.ChannelStandard:
			if !f.state.spaces[c.SpaceID].ArchivedAt.IsZero() {
				continue
			}
			if flt.All || slices.Contains(flt.SpaceIDs, c.SpaceID) || slices.Contains(flt.ChannelIDs, c.ID) {
				out = append(out, c)
			}
		case chat.ChannelDM:
			if slices.Contains(c.ParticipantIDs, flt.ParticipantID) {
				out = append(out, c)
			}
		}
	}
	sortChannels(out)
	return out, nil
}

func sortChannels(cs []chat.Channel) {
	slices.SortFunc(cs, func(a, b chat.Channel) int { return cmp.Or(strings.Compare(a.Name, b.Name), compareIDs(a.ID, b.ID)) })
}

func compareIDs(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) }

func (f *fakeStore) UpdateChannel(_ context.Context, id uuid.UUID, change func(*chat.Channel) (bool, error)) (chat.Channel, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("UpdateChannel"); err != nil {
		return chat.Channel{}, err
	}
	c, ok := f.state.channels[id]
	if !ok {
		return chat.Channel{}, problem.ErrNotFound
	}
	changed, err := change(&c)
	if err != nil {
		return chat.Channel{}, err
	}
	if changed {
		f.state.channels[id] = c
	}
	return c, nil
}

func (f *fakeStore) InsertThread(_ context.Context, t chat.Thread) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("InsertThread"); err != nil {
		return err
	}
	f.state.threads[t.ID] = t
	return nil
}

func (f *fakeStore) Thread(_ context.Context, id uuid.UUID) (chat.Thread, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Thread"); err != nil {
		return chat.Thread{}, err
	}
	t, ok := f.state.threads[id]
	if !ok {
		return chat.Thread{}, problem.ErrNotFound
	}
	return t, nil
}

func (f *fakeStore) PostMessage(_ context.Context, m chat.Message) (app.Posting, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("PostMessage"); err != nil {
		return app.Posting{}, err
	}
	t, ok := f.state.threads[m.ThreadID]
	if !ok {
		return app.Posting{}, problem.ErrNotFound
	}
	t.LastMessageSeq++
	t.Version++
	f.state.threads[t.ID] = t
	p := app.Posting{Thread: t, ChannelArchived: !f.state.channels[t.ChannelID].ArchivedAt.IsZero(), CreatedAt: m.CreatedAt}
	if p.ChannelArchived {
		return p, nil
	}
	for _, o := range f.state.messages {
		if m.ExternalKey != "" && o.ExternalKey == m.ExternalKey {
			return app.Posting{}, chat.ErrDuplicateKey
		}
	}
	m.Seq = t.LastMessageSeq
	m.MentionIDs = slices.Clone(m.MentionIDs)
	f.state.messages[m.ID] = m
	return p, nil
}

func (f *fakeStore) ThreadCounters(_ context.Context, channelIDs []uuid.UUID) ([]chat.ThreadCounter, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("ThreadCounters"); err != nil {
		return nil, err
	}
	var out []chat.ThreadCounter
	for _, t := range f.state.threads {
		if slices.Contains(channelIDs, t.ChannelID) && t.LastMessageSeq > t.UnreadFloorSeq {
			out = append(out, chat.ThreadCounter{
				ThreadID: t.ID, ChannelID: t.ChannelID, SpaceID: t.SpaceID,
				LastMessageSeq: t.LastMessageSeq, UnreadFloorSeq: t.UnreadFloorSeq, Version: t.Version,
			})
		}
	}
	return out, nil
}

func (f *fakeStore) InsertMessage(_ context.Context, m chat.Message) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("InsertMessage"); err != nil {
		return err
	}
	for _, o := range f.state.messages {
		if m.ExternalKey != "" && o.ExternalKey == m.ExternalKey {
			return chat.ErrDuplicateKey
		}
	}
	m.MentionIDs = slices.Clone(m.MentionIDs)
	f.state.messages[m.ID] = m
	return nil
}

func (f *fakeStore) Message(_ context.Context, id uuid.UUID) (chat.Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Message"); err != nil {
		return chat.Message{}, err
	}
	m, ok := f.state.messages[id]
	if !ok {
		return chat.Message{}, problem.ErrNotFound
	}
	return m, nil
}

func (f *fakeStore) Messages(_ context.Context, threadID uuid.UUID, after int64, limit int) ([]chat.Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Messages"); err != nil {
		return nil, err
	}
	var out []chat.Message
	for _, m := range f.state.messages {
		if m.ThreadID == threadID && m.Seq > after {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b chat.Message) int { return cmp.Compare(a.Seq, b.Seq) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (f *fakeStore) UpdateMessage(_ context.Context, id uuid.UUID, change func(*chat.Message) (bool, error)) (chat.Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("UpdateMessage"); err != nil {
		return chat.Message{}, err
	}
	m, ok := f.state.messages[id]
	if !ok {
		return chat.Message{}, problem.ErrNotFound
	}
	changed, err := change(&m)
	if err != nil {
		return chat.Message{}, err
	}
	if changed {
		f.state.messages[id] = m
		if m.Redacted() {
			f.state.reactions = slices.DeleteFunc(f.state.reactions, func(r app.Reaction) bool { return r.MessageID == id })
		}
	}
	return m, nil
}

func (f *fakeStore) LockMessage(_ context.Context, id uuid.UUID) (chat.Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("LockMessage"); err != nil {
		return chat.Message{}, err
	}
	m, ok := f.state.messages[id]
	if !ok {
		return chat.Message{}, problem.ErrNotFound
	}
	return m, nil
}

func (f *fakeStore) ReactionState(_ context.Context, messageID, principalID uuid.UUID, reaction string) (app.ReactionState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("ReactionState"); err != nil {
		return app.ReactionState{}, err
	}
	var st app.ReactionState
	seen := map[string]bool{}
	for _, r := range f.state.reactions {
		if r.MessageID != messageID {
			continue
		}
		seen[r.Reaction] = true
		st.Exists = st.Exists || r.Reaction == reaction
		st.Made = st.Made || r.Reaction == reaction && r.PrincipalID == principalID
	}
	st.Distinct = len(seen)
	return st, nil
}

func (f *fakeStore) InsertReaction(_ context.Context, r app.Reaction) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("InsertReaction"); err != nil {
		return false, err
	}
	for _, o := range f.state.reactions {
		if o.MessageID == r.MessageID && o.PrincipalID == r.PrincipalID && o.Reaction == r.Reaction {
			return false, nil
		}
	}
	f.state.reactions = append(f.state.reactions, r)
	return true, nil
}

func (f *fakeStore) DeleteReaction(_ context.Context, messageID, principalID uuid.UUID, reaction string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("DeleteReaction"); err != nil {
		return false, err
	}
	n := len(f.state.reactions)
	f.state.reactions = slices.DeleteFunc(f.state.reactions, func(o app.Reaction) bool {
		return o.MessageID == messageID && o.PrincipalID == principalID && o.Reaction == reaction
	})
	return len(f.state.reactions) < n, nil
}

// Reactions counts in the order reactions were made, which is the order of their first
// creation time in these tests (the fake clock does not go back).
func (f *fakeStore) Reactions(_ context.Context, messageIDs []uuid.UUID, readerID uuid.UUID) (map[uuid.UUID][]chat.ReactionCount, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Reactions"); err != nil {
		return nil, err
	}
	out := map[uuid.UUID][]chat.ReactionCount{}
	for _, r := range f.state.reactions {
		if !slices.Contains(messageIDs, r.MessageID) {
			continue
		}
		list := out[r.MessageID]
		i := slices.IndexFunc(list, func(c chat.ReactionCount) bool { return c.Reaction == r.Reaction })
		if i < 0 {
			list = append(list, chat.ReactionCount{Reaction: r.Reaction})
			i = len(list) - 1
		}
		list[i].Count++
		list[i].Me = list[i].Me || r.PrincipalID == readerID
		out[r.MessageID] = list
	}
	return out, nil
}

func (f *fakeStore) CountUnreadMentions(_ context.Context, principalID uuid.UUID, channelIDs []uuid.UUID, readSeqs map[uuid.UUID]int64) (map[uuid.UUID]int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("CountUnreadMentions"); err != nil {
		return nil, err
	}
	out := map[uuid.UUID]int{}
	for _, m := range f.state.messages {
		t := f.state.threads[m.ThreadID]
		if slices.Contains(channelIDs, m.ChannelID) && slices.Contains(m.MentionIDs, principalID) &&
			m.Seq > t.UnreadFloorSeq && m.Seq > readSeqs[m.ThreadID] {
			out[m.ThreadID]++
		}
	}
	return out, nil
}

// txKey marks a context inside a fake transaction.
type txKey struct{}

// fakeTx runs fn in a fake transaction: the store is snapshotted before and restored when fn
// fails, and the appender's staged events are committed only when fn succeeds. A nested call
// joins the outer transaction, as tx.Runner does.
type fakeTx struct {
	store    *fakeStore
	appender *fakeAppender
	mu       gosync.Mutex
	n        int
}

func (f *fakeTx) RunInTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if ctx.Value(txKey{}) != nil {
		return fn(ctx)
	}
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
	before := f.store.snapshot()
	staged := &[]kernel.Event{}
	err := fn(context.WithValue(ctx, txKey{}, staged))
	if err != nil {
		f.store.restore(before)
		return err
	}
	f.appender.commit(*staged)
	return nil
}

func (f *fakeTx) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// fakeAppender validates every event against sync's register of durable types, as the real
// appender does, and keeps what committed transactions appended, in order. Redact calls are
// recorded in the same log (as Type "redact"), so a test sees their order.
type fakeAppender struct {
	mu        gosync.Mutex
	committed []kernel.Event
	failNext  error
}

func (a *fakeAppender) Append(ctx context.Context, events ...kernel.Event) error {
	staged, ok := ctx.Value(txKey{}).(*[]kernel.Event)
	if !ok {
		return problem.New(problem.ErrConflict, "append outside a transaction")
	}
	a.mu.Lock()
	err := a.failNext
	a.failNext = nil
	a.mu.Unlock()
	if err != nil {
		return err
	}
	for _, e := range events {
		if err := syncdomain.Validate(e); err != nil {
			return err
		}
	}
	*staged = append(*staged, events...)
	return nil
}

func (a *fakeAppender) commit(events []kernel.Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.committed = append(a.committed, events...)
}

func (a *fakeAppender) events() []kernel.Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.committed)
}

func (a *fakeAppender) fail(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failNext = err
}

// fakeRedactor records the resources it redacts into the appender's staged log (type
// "redact"), so the order against the appends is visible.
type fakeRedactor struct {
	failNext error
}

func (r *fakeRedactor) Redact(ctx context.Context, kind kernel.ResourceKind, id uuid.UUID) error {
	staged, ok := ctx.Value(txKey{}).(*[]kernel.Event)
	if !ok {
		return problem.New(problem.ErrConflict, "redact outside a transaction")
	}
	if err := r.failNext; err != nil {
		r.failNext = nil
		return err
	}
	*staged = append(*staged, kernel.Event{Type: "redact", ResourceKind: kind, ResourceID: id})
	return nil
}

// fakeAuthorizer decides by a table the test fills: deny maps an (action, resource id) pair
// to the error it answers; everything else is allowed. It records every decision, so a test
// checks which action was asked on which resource (with which ancestors): the policy itself
// is authz's and tested there. levels gives Decider.Level by resource id, readers the
// principals MayRead allows by channel id. The shared fake records the decisions; decide
// answers them.
type fakeAuthorizer struct {
	*authorizetest.Authorizer

	mu      gosync.Mutex
	deny    map[denyKey]error
	levels  map[uuid.UUID]authz.Role
	readers map[uuid.UUID][]uuid.UUID
	scope   authz.Scope
	fail    error // answered by Authorize, ForActor and MayRead when set
	readErr error // answered by MayRead alone when set
}

type denyKey struct {
	action kernel.Action
	id     uuid.UUID
}

func newFakeAuthorizer() *fakeAuthorizer {
	f := &fakeAuthorizer{Authorizer: &authorizetest.Authorizer{}, deny: map[denyKey]error{}, levels: map[uuid.UUID]authz.Role{}, readers: map[uuid.UUID][]uuid.UUID{}}
	f.Rule = f.decide
	return f
}

func (f *fakeAuthorizer) denyOn(action kernel.Action, id uuid.UUID, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deny[denyKey{action, id}] = err
}

// decide answers a decision the shared fake recorded.
func (f *fakeAuthorizer) decide(c authorizetest.Call) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	if !c.Authenticated {
		return problem.ErrUnauthenticated
	}
	if c.Res.Kind == kernel.ResourceThread && c.Res.ID == uuid.Nil {
		// A capability asked on some thread of a channel: decided like the channel.
		return f.deny[denyKey{c.Action, c.Res.ChannelID}]
	}
	return f.deny[denyKey{c.Action, c.Res.ID}]
}

func (f *fakeAuthorizer) Scope(context.Context, uuid.UUID) (authz.Scope, error) {
	return f.scope, nil
}

func (f *fakeAuthorizer) ForActor(ctx context.Context) (authz.Decider, error) {
	f.mu.Lock()
	fail := f.fail
	f.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	if _, ok := actor.From(ctx); !ok {
		return nil, problem.ErrUnauthenticated
	}
	return fakeDecider{f}, nil
}

func (f *fakeAuthorizer) MayRead(_ context.Context, principalID uuid.UUID, res authorize.Resource) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return false, f.fail
	}
	if f.readErr != nil {
		return false, f.readErr
	}
	return slices.Contains(f.readers[res.ChannelID], principalID), nil
}

// fakeDecider decides like its fakeAuthorizer.
type fakeDecider struct{ f *fakeAuthorizer }

func (d fakeDecider) Scope() authz.Scope { return d.f.scope }

func (d fakeDecider) Authorize(ctx context.Context, action kernel.Action, res authorize.Resource) error {
	return d.f.Authorize(ctx, action, res)
}

func (d fakeDecider) Level(res authorize.Resource) authz.Role {
	d.f.mu.Lock()
	defer d.f.mu.Unlock()
	return d.f.levels[res.ID]
}

// fakeGrants records the grants the use cases make; it appends nothing (the real port appends
// its own events, which are authz's to test).
type fakeGrants struct {
	mu      gosync.Mutex
	granted []authz.GrantInput
	fail    error
}

func (g *fakeGrants) Grant(ctx context.Context, in authz.GrantInput) (authz.Grant, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ctx.Value(txKey{}) == nil {
		return authz.Grant{}, problem.New(problem.ErrConflict, "grant outside a transaction")
	}
	if g.fail != nil {
		return authz.Grant{}, g.fail
	}
	g.granted = append(g.granted, in)
	return authz.Grant{ID: uuid.New(), PrincipalID: in.PrincipalID, ResourceKind: in.ResourceKind, ResourceID: in.ResourceID, Role: in.Role}, nil
}

func (g *fakeGrants) Revoke(context.Context, uuid.UUID) (authz.Grant, error) {
	return authz.Grant{}, problem.ErrNotFound
}

func (g *fakeGrants) List(context.Context, uuid.UUID) ([]authz.Grant, error) { return nil, nil }

func (g *fakeGrants) grants() []authz.GrantInput {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.granted)
}

// fakeDirectory is an identity.Directory over a fixed set of principals; inactive ones are
// named by id but not by handle, as identity does.
type fakeDirectory struct {
	refs     map[uuid.UUID]identity.PrincipalRef
	inactive map[uuid.UUID]bool
	fail     error
	byHandle int // ByHandles calls
	mu       gosync.Mutex
}

func (d *fakeDirectory) Ref(ctx context.Context, id uuid.UUID) (identity.PrincipalRef, error) {
	refs, err := d.Refs(ctx, []uuid.UUID{id})
	if err != nil {
		return identity.PrincipalRef{}, err
	}
	r, ok := refs[id]
	if !ok {
		return identity.PrincipalRef{}, identity.ErrPrincipalNotFound
	}
	return r, nil
}

func (d *fakeDirectory) Refs(_ context.Context, ids []uuid.UUID) (map[uuid.UUID]identity.PrincipalRef, error) {
	if d.fail != nil {
		return nil, d.fail
	}
	out := map[uuid.UUID]identity.PrincipalRef{}
	for _, id := range ids {
		if r, ok := d.refs[id]; ok {
			out[id] = r
		}
	}
	return out, nil
}

func (d *fakeDirectory) ActiveRefs(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]identity.PrincipalRef, error) {
	out, err := d.Refs(ctx, ids)
	for id := range out {
		if d.inactive[id] {
			delete(out, id)
		}
	}
	return out, err
}

func (d *fakeDirectory) ByHandles(_ context.Context, handles []string) (map[string]identity.PrincipalRef, error) {
	d.mu.Lock()
	d.byHandle++
	d.mu.Unlock()
	if d.fail != nil {
		return nil, d.fail
	}
	out := map[string]identity.PrincipalRef{}
	for _, r := range d.refs {
		if slices.Contains(handles, r.Handle) && !d.inactive[r.ID] {
			out[r.Handle] = r
		}
	}
	return out, nil
}

// payload decodes an event's payload into a map, the way a client reads it.
func payload(e kernel.Event) map[string]any {
	b, err := json.Marshal(e.Payload)
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	return m
}

// fakeOwnReads records the own posts it is asked to mark read, which must come inside a
// fake transaction (unless realTx: the stack's transactions are PostgreSQL's); failNext makes
// the next call fail, as a failed write of the read state would.
type fakeOwnReads struct {
	mu       gosync.Mutex
	marked   []app.OwnPost
	failNext error
	realTx   bool
}

func (f *fakeOwnReads) MarkRead(ctx context.Context, p app.OwnPost) error {
	if _, ok := ctx.Value(txKey{}).(*[]kernel.Event); !ok && !f.realTx {
		return problem.New(problem.ErrConflict, "own post marked outside a transaction")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.failNext; err != nil {
		f.failNext = nil
		return err
	}
	f.marked = append(f.marked, p)
	return nil
}

func (f *fakeOwnReads) posts() []app.OwnPost {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.marked)
}

// SearchUsable implements app.Store: search is PostgreSQL's text search, which the fake does
// not imitate; it is tested against PostgreSQL (internal/wire's search tests).
func (f *fakeStore) SearchUsable(context.Context, string) (bool, error) {
	return false, errors.New("fake store: search runs on PostgreSQL only")
}

// SearchMessages implements app.Store; see SearchUsable.
func (f *fakeStore) SearchMessages(context.Context, app.SearchSpec) ([]app.SearchRow, error) {
	return nil, errors.New("fake store: search runs on PostgreSQL only")
}

// fakeReaders is authz.Readers over a fixed list of readers sorted by principal id; it
// records its arguments.
type fakeReaders struct {
	mu                        gosync.Mutex
	list                      []authz.Reader
	err                       error
	spaceID, channelID, after uuid.UUID
	limit                     int
}

func (f *fakeReaders) ChannelReaders(_ context.Context, spaceID, channelID, after uuid.UUID, limit int) ([]authz.Reader, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.spaceID, f.channelID, f.after, f.limit = spaceID, channelID, after, limit
	if f.err != nil {
		return nil, f.err
	}
	out := []authz.Reader{}
	for _, r := range f.list {
		if slices.Compare(r.PrincipalID[:], after[:]) > 0 && len(out) < limit {
			out = append(out, r)
		}
	}
	return out, nil
}
