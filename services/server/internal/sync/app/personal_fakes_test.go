package app_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/authorize/authorizetest"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/kernel/tx"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/sync/domain"
)

// The people and places of the personal-data tests.
var (
	alex = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000a1e01")
	sam  = uuid.MustParse("0193a1c2-7c00-7a01-8000-00000005a302")

	space      = uuid.MustParse("0193a1c2-7c00-7a01-8000-000000005ac1")
	channel    = uuid.MustParse("0193a1c2-7c00-7a01-8000-00000000c0a1")
	other      = uuid.MustParse("0193a1c2-7c00-7a01-8000-00000000c0b2") // a second channel of the space
	archived   = uuid.MustParse("0193a1c2-7c00-7a01-8000-00000000c0c3") // an archived channel
	dm         = uuid.MustParse("0193a1c2-7c00-7a01-8000-00000000d301") // a direct message, in no space
	thread     = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000070a1") // in channel, 7 messages
	thread2    = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000070a2") // in channel, empty
	otherTh    = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000070b1") // in other
	dmThread   = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000070d1") // in dm
	archivedTh = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000070c1") // in archived
	nowhere    = uuid.MustParse("0193a1c2-7c00-7a01-8000-00000000dead") // no thread, no channel

	start = time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
)

// txKey marks a context inside a transaction of a personalWorld.
type txKey struct{}

// draftKey identifies a draft; thread is uuid.Nil for a channel's own draft.
type draftKey struct{ principal, channel, thread uuid.UUID }

// personalWorld is the state behind the fake PersonalStore, TxRunner and kernel.Appender: one
// value implements all three, so that a rolled-back transaction undoes its rows and its events
// together, as PostgreSQL does.
type personalWorld struct {
	readStates map[[2]uuid.UUID]syncmod.ReadState
	drafts     map[draftKey]syncmod.Draft
	settings   map[[2]string]syncmod.Setting
	sidebars   map[uuid.UUID]syncmod.Sidebar
	// committed are the events of committed transactions, staged those of the open one.
	committed, staged []kernel.Event
	// txs counts the transactions begun (joined ones not).
	txs int

	failWrite  error // every store write fails with it
	failRead   error // every store read fails with it
	failAppend error // every Append fails with it
}

func newPersonalWorld() *personalWorld {
	return &personalWorld{
		readStates: map[[2]uuid.UUID]syncmod.ReadState{},
		drafts:     map[draftKey]syncmod.Draft{},
		settings:   map[[2]string]syncmod.Setting{},
		sidebars:   map[uuid.UUID]syncmod.Sidebar{},
	}
}

// state is a copy of the rows and committed events, to restore on rollback and to compare.
type state struct {
	readStates map[[2]uuid.UUID]syncmod.ReadState
	drafts     map[draftKey]syncmod.Draft
	settings   map[[2]string]syncmod.Setting
	sidebars   map[uuid.UUID]syncmod.Sidebar
	committed  []kernel.Event
}

func (w *personalWorld) state() state {
	return state{
		readStates: maps.Clone(w.readStates),
		drafts:     maps.Clone(w.drafts),
		settings:   maps.Clone(w.settings),
		sidebars:   maps.Clone(w.sidebars),
		committed:  slices.Clone(w.committed),
	}
}

func (w *personalWorld) restore(s state) {
	w.readStates, w.drafts, w.settings, w.sidebars = s.readStates, s.drafts, s.settings, s.sidebars
	w.committed = s.committed
}

// RunInTx implements app.TxRunner: it joins the transaction of ctx, else it begins one that
// commits its staged events when fn succeeds and restores every row when it fails.
func (w *personalWorld) RunInTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if ctx.Value(txKey{}) != nil {
		return fn(ctx)
	}
	w.txs++
	before := w.state()
	if err := fn(context.WithValue(ctx, txKey{}, true)); err != nil {
		w.restore(before)
		w.staged = nil
		return fmt.Errorf("fake tx: %w", err)
	}
	w.committed = append(w.committed, w.staged...)
	w.staged = nil
	return nil
}

// Append implements kernel.Appender like the real one: only inside a transaction, and only
// events the register accepts (domain.Validate), all of one call or none.
func (w *personalWorld) Append(ctx context.Context, events ...kernel.Event) error {
	if ctx.Value(txKey{}) == nil {
		return tx.ErrNoTransaction
	}
	if w.failAppend != nil {
		return w.failAppend
	}
	for _, e := range events {
		if err := domain.Validate(e); err != nil {
			return err
		}
	}
	w.staged = append(w.staged, events...)
	return nil
}

func (w *personalWorld) UpsertReadState(_ context.Context, rs syncmod.ReadState, _ time.Time) (syncmod.ReadState, error) {
	if w.failWrite != nil {
		return syncmod.ReadState{}, w.failWrite
	}
	k := [2]uuid.UUID{rs.PrincipalID, rs.ThreadID}
	rs.Version = w.readStates[k].Version + 1
	w.readStates[k] = rs
	return rs, nil
}

func (w *personalWorld) AdvanceReadState(ctx context.Context, rs syncmod.ReadState, at time.Time) (syncmod.ReadState, bool, error) {
	if w.failWrite != nil {
		return syncmod.ReadState{}, false, w.failWrite
	}
	if cur, ok := w.readStates[[2]uuid.UUID{rs.PrincipalID, rs.ThreadID}]; ok && cur.LastReadSeq >= rs.LastReadSeq {
		return syncmod.ReadState{}, false, nil
	}
	stored, err := w.UpsertReadState(ctx, rs, at)
	return stored, err == nil, err
}

func (w *personalWorld) ReadStates(_ context.Context, principalID uuid.UUID) ([]syncmod.ReadState, error) {
	if w.failRead != nil {
		return nil, w.failRead
	}
	out := []syncmod.ReadState{}
	for _, rs := range w.readStates {
		if rs.PrincipalID == principalID {
			out = append(out, rs)
		}
	}
	slices.SortFunc(out, func(a, b syncmod.ReadState) int { return bytes.Compare(a.ThreadID[:], b.ThreadID[:]) })
	return out, nil
}

func (w *personalWorld) UpsertDraft(_ context.Context, d syncmod.Draft) (syncmod.Draft, error) {
	if w.failWrite != nil {
		return syncmod.Draft{}, w.failWrite
	}
	k := draftKey{d.PrincipalID, d.ChannelID, d.ThreadID}
	d.Version = w.drafts[k].Version + 1
	w.drafts[k] = d
	return d, nil
}

func (w *personalWorld) DeleteDraft(_ context.Context, principalID, channelID, threadID uuid.UUID) (syncmod.Draft, bool, error) {
	if w.failWrite != nil {
		return syncmod.Draft{}, false, w.failWrite
	}
	k := draftKey{principalID, channelID, threadID}
	d, ok := w.drafts[k]
	delete(w.drafts, k)
	return d, ok, nil
}

func (w *personalWorld) Draft(_ context.Context, principalID, channelID, threadID uuid.UUID) (syncmod.Draft, bool, error) {
	if w.failRead != nil {
		return syncmod.Draft{}, false, w.failRead
	}
	d, ok := w.drafts[draftKey{principalID, channelID, threadID}]
	return d, ok, nil
}

func (w *personalWorld) Drafts(_ context.Context, principalID uuid.UUID) ([]syncmod.Draft, error) {
	if w.failRead != nil {
		return nil, w.failRead
	}
	out := []syncmod.Draft{}
	for _, d := range w.drafts {
		if d.PrincipalID == principalID {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b syncmod.Draft) int {
		if c := bytes.Compare(a.ChannelID[:], b.ChannelID[:]); c != 0 {
			return c
		}
		return bytes.Compare(a.ThreadID[:], b.ThreadID[:]) // uuid.Nil, the channel's own, first
	})
	return out, nil
}

func (w *personalWorld) UpsertSetting(_ context.Context, s syncmod.Setting, _ time.Time) (syncmod.Setting, error) {
	if w.failWrite != nil {
		return syncmod.Setting{}, w.failWrite
	}
	k := [2]string{s.PrincipalID.String(), s.Key}
	s.Version = w.settings[k].Version + 1
	w.settings[k] = s
	return s, nil
}

func (w *personalWorld) Settings(_ context.Context, principalID uuid.UUID) ([]syncmod.Setting, error) {
	if w.failRead != nil {
		return nil, w.failRead
	}
	out := []syncmod.Setting{}
	for _, s := range w.settings {
		if s.PrincipalID == principalID {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b syncmod.Setting) int { return cmpString(a.Key, b.Key) })
	return out, nil
}

func (w *personalWorld) UpsertSidebar(_ context.Context, sb syncmod.Sidebar, _ time.Time) (syncmod.Sidebar, error) {
	if w.failWrite != nil {
		return syncmod.Sidebar{}, w.failWrite
	}
	sb.Version = w.sidebars[sb.PrincipalID].Version + 1
	w.sidebars[sb.PrincipalID] = sb
	return sb, nil
}

func (w *personalWorld) Sidebar(_ context.Context, principalID uuid.UUID) (syncmod.Sidebar, bool, error) {
	if w.failRead != nil {
		return syncmod.Sidebar{}, false, w.failRead
	}
	sb, ok := w.sidebars[principalID]
	return sb, ok, nil
}

// PersonalData is the four readers above together, as the PostgreSQL store's one batch is.
func (w *personalWorld) PersonalData(ctx context.Context, principalID uuid.UUID) (app.PersonalData, error) {
	var (
		d   app.PersonalData
		err error
	)
	if d.ReadStates, err = w.ReadStates(ctx, principalID); err != nil {
		return app.PersonalData{}, err
	}
	if d.Drafts, err = w.Drafts(ctx, principalID); err != nil {
		return app.PersonalData{}, err
	}
	if d.Settings, err = w.Settings(ctx, principalID); err != nil {
		return app.PersonalData{}, err
	}
	sb, found, err := w.Sidebar(ctx, principalID)
	if err != nil {
		return app.PersonalData{}, err
	}
	if !found {
		sb = syncmod.Sidebar{PrincipalID: principalID, Sections: []syncmod.SidebarSection{}}
	}
	d.Sidebar = sb
	return d, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

var (
	_ app.PersonalStore = (*personalWorld)(nil)
	_ app.TxRunner      = (*personalWorld)(nil)
	_ kernel.Appender   = (*personalWorld)(nil)
)

// authCall is one question an actor put to the fake authorizer, as checkAuth compares it.
type authCall struct {
	actorID uuid.UUID
	action  kernel.Action
	res     authorize.Resource
}

// denyActions is a Rule of the shared fake authorizer: everything is allowed but the actions
// in deny, which get their error.
func denyActions(deny map[kernel.Action]error) func(authorizetest.Call) error {
	return func(c authorizetest.Call) error { return deny[c.Action] }
}

// fakePlaces knows the threads and channels of the tests and counts its calls.
type fakePlaces struct {
	threads  map[uuid.UUID]app.ThreadPlace
	channels map[uuid.UUID]app.ChannelPlace
	calls    int
	err      error // every call fails with it
}

func newFakePlaces() *fakePlaces {
	threadIn := func(id, ch, sp uuid.UUID, last int64) app.ThreadPlace {
		return app.ThreadPlace{ThreadID: id, ChannelID: ch, SpaceID: sp, LastMessageSeq: last}
	}
	return &fakePlaces{
		threads: map[uuid.UUID]app.ThreadPlace{
			thread:     threadIn(thread, channel, space, 7),
			thread2:    threadIn(thread2, channel, space, 0),
			otherTh:    threadIn(otherTh, other, space, 3),
			dmThread:   threadIn(dmThread, dm, uuid.Nil, 4),
			archivedTh: threadIn(archivedTh, archived, space, 2),
		},
		channels: map[uuid.UUID]app.ChannelPlace{
			channel:  {ChannelID: channel, SpaceID: space},
			other:    {ChannelID: other, SpaceID: space},
			dm:       {ChannelID: dm},
			archived: {ChannelID: archived, SpaceID: space, Archived: true},
		},
	}
}

func (p *fakePlaces) Thread(_ context.Context, id uuid.UUID) (app.ThreadPlace, error) {
	p.calls++
	if p.err != nil {
		return app.ThreadPlace{}, p.err
	}
	t, ok := p.threads[id]
	if !ok {
		return app.ThreadPlace{}, fmt.Errorf("chat: thread %s: %w", id, problem.ErrNotFound)
	}
	return t, nil
}

func (p *fakePlaces) Channel(_ context.Context, id uuid.UUID) (app.ChannelPlace, error) {
	p.calls++
	if p.err != nil {
		return app.ChannelPlace{}, p.err
	}
	c, ok := p.channels[id]
	if !ok {
		return app.ChannelPlace{}, fmt.Errorf("chat: channel %s: %w", id, problem.ErrNotFound)
	}
	return c, nil
}

// personalEnv is one test's use cases over fresh fakes.
type personalEnv struct {
	world    *personalWorld
	auth     *authorizetest.Authorizer
	places   *fakePlaces
	personal *app.Personal
}

// testPersonalConfig has small limits, so that the tests can cross them cheaply.
var testPersonalConfig = app.PersonalConfig{MaxSettingBytes: 32, MaxDraftBytes: 16, Sidebar: domain.SidebarLimits{Sections: 8, Channels: 64}}

func newPersonalEnv(t *testing.T) personalEnv {
	t.Helper()
	e := personalEnv{world: newPersonalWorld(), auth: &authorizetest.Authorizer{RequireActor: true}, places: newFakePlaces()}
	p, err := app.NewPersonal(e.deps())
	if err != nil {
		t.Fatalf("NewPersonal: %v", err)
	}
	e.personal = p
	return e
}

func (e personalEnv) deps() app.PersonalDeps {
	return app.PersonalDeps{
		Runner:     e.world,
		Store:      e.world,
		Places:     e.places,
		Authorizer: e.auth,
		Appender:   e.world,
		Clock:      clock.NewFake(start),
		Config:     testPersonalConfig,
	}
}

// as returns a context whose actor is the person principalID.
func as(t *testing.T, principalID uuid.UUID) context.Context {
	t.Helper()
	return actor.With(t.Context(), actor.Actor{PrincipalID: principalID, Kind: actor.KindPerson})
}
