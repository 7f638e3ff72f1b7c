package postgres_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	gosync "sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	"bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/sync/domain"
)

// The people and places of the personal-data tests.
var (
	alexID    = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000a1e01")
	samID     = uuid.MustParse("0193a1c2-7c00-7a01-8000-00000005a302")
	spaceID   = uuid.MustParse("0193a1c2-7c00-7a01-8000-000000005ac1")
	channelA  = uuid.MustParse("0193a1c2-7c00-7a01-8000-00000000c0a1")
	channelB  = uuid.MustParse("0193a1c2-7c00-7a01-8000-00000000c0b2")
	threadA1  = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000070a1")
	threadA2  = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000070a2")
	savedTime = time.Date(2026, 12, 1, 9, 30, 15, 123456000, time.UTC)
)

// personalEnv is one test's database with the personal-data store.
type personalEnv struct {
	env
	store *syncpg.PersonalStore
}

func newPersonalEnv(t *testing.T) personalEnv {
	t.Helper()
	e := newEnv(t)
	return personalEnv{env: e, store: syncpg.NewPersonalStore(e.runner)}
}

// count returns the number of rows of a table of the sync schema.
func (e personalEnv) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := e.pool.QueryRow(t.Context(), "SELECT count(*) FROM sync."+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func TestPersonalStoreReadStates(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	ctx := t.Context()
	got, err := e.store.UpsertReadState(ctx, syncmod.ReadState{PrincipalID: alexID, ThreadID: threadA2, ChannelID: channelA, LastReadSeq: 3, Version: 99}, savedTime)
	if err != nil {
		t.Fatalf("UpsertReadState: %v", err)
	}
	if want := (syncmod.ReadState{PrincipalID: alexID, ThreadID: threadA2, ChannelID: channelA, LastReadSeq: 3, Version: 1}); got != want {
		t.Errorf("first upsert = %+v, want %+v (the argument's version ignored)", got, want)
	}
	got, err = e.store.UpsertReadState(ctx, syncmod.ReadState{PrincipalID: alexID, ThreadID: threadA2, ChannelID: channelB, LastReadSeq: 1}, savedTime)
	if err != nil {
		t.Fatalf("UpsertReadState again: %v", err)
	}
	if want := (syncmod.ReadState{PrincipalID: alexID, ThreadID: threadA2, ChannelID: channelB, LastReadSeq: 1, Version: 2}); got != want {
		t.Errorf("second upsert = %+v, want %+v", got, want)
	}
	for _, rs := range []syncmod.ReadState{
		{PrincipalID: alexID, ThreadID: threadA1, ChannelID: channelA, LastReadSeq: 5},
		{PrincipalID: samID, ThreadID: threadA1, ChannelID: channelA, LastReadSeq: 6},
	} {
		if _, err := e.store.UpsertReadState(ctx, rs, savedTime); err != nil {
			t.Fatal(err)
		}
	}
	list, err := e.store.ReadStates(ctx, alexID)
	if err != nil {
		t.Fatalf("ReadStates: %v", err)
	}
	want := []syncmod.ReadState{
		{PrincipalID: alexID, ThreadID: threadA1, ChannelID: channelA, LastReadSeq: 5, Version: 1},
		{PrincipalID: alexID, ThreadID: threadA2, ChannelID: channelB, LastReadSeq: 1, Version: 2},
	}
	if !slices.Equal(list, want) {
		t.Errorf("ReadStates = %+v, want %+v", list, want)
	}
	none, err := e.store.ReadStates(ctx, uuid.Must(uuid.NewV7()))
	if err != nil || none == nil || len(none) != 0 {
		t.Errorf("ReadStates of nobody = %v, %v; want empty, not nil", none, err)
	}
}

func TestPersonalStoreDrafts(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	ctx := t.Context()
	later := savedTime.Add(time.Minute)
	upsert := func(d syncmod.Draft) syncmod.Draft {
		t.Helper()
		got, err := e.store.UpsertDraft(ctx, d)
		if err != nil {
			t.Fatalf("UpsertDraft(%+v): %v", d, err)
		}
		return got
	}
	// The channel's own draft (no thread) is one row like any other.
	upsert(syncmod.Draft{PrincipalID: alexID, ChannelID: channelB, ContentMD: "New thread", UpdatedAt: savedTime})
	got := upsert(syncmod.Draft{PrincipalID: alexID, ChannelID: channelB, ContentMD: "New thread, Sam", UpdatedAt: later})
	if want := (syncmod.Draft{PrincipalID: alexID, ChannelID: channelB, ContentMD: "New thread, Sam", Version: 2, UpdatedAt: later}); got != want {
		t.Errorf("second save of the channel's draft = %+v, want %+v", got, want)
	}
	upsert(syncmod.Draft{PrincipalID: alexID, ChannelID: channelA, ThreadID: threadA2, ContentMD: "Reply two", UpdatedAt: savedTime})
	upsert(syncmod.Draft{PrincipalID: alexID, ChannelID: channelA, ThreadID: threadA1, ContentMD: "Reply one", UpdatedAt: savedTime})
	upsert(syncmod.Draft{PrincipalID: alexID, ChannelID: channelA, ContentMD: "Channel A", UpdatedAt: savedTime})
	upsert(syncmod.Draft{PrincipalID: samID, ChannelID: channelA, ContentMD: "Sam's", UpdatedAt: savedTime})
	if n := e.count(t, "drafts"); n != 5 {
		t.Errorf("%d draft rows, want 5", n)
	}

	list, err := e.store.Drafts(ctx, alexID)
	if err != nil {
		t.Fatalf("Drafts: %v", err)
	}
	var order []string
	for _, d := range list {
		order = append(order, d.ContentMD)
		if d.PrincipalID != alexID || d.UpdatedAt.Location() != time.UTC {
			t.Errorf("draft %+v: want Alex's, in UTC", d)
		}
	}
	if want := []string{"Channel A", "Reply one", "Reply two", "New thread, Sam"}; !slices.Equal(order, want) {
		t.Errorf("Drafts in order %q, want %q", order, want)
	}

	gone, found, err := e.store.DeleteDraft(ctx, alexID, channelB, uuid.Nil)
	if err != nil || !found {
		t.Fatalf("DeleteDraft = %v, %v; want found", found, err)
	}
	if gone.Version != 2 || gone.ContentMD != "New thread, Sam" || gone.ThreadID != uuid.Nil {
		t.Errorf("deleted %+v, want the channel's own draft at version 2", gone)
	}
	gone, found, err = e.store.DeleteDraft(ctx, alexID, channelA, threadA1)
	if err != nil || !found || gone.ThreadID != threadA1 || gone.Version != 1 {
		t.Errorf("DeleteDraft of a thread's draft = %+v, %v, %v", gone, found, err)
	}
	if _, found, err := e.store.DeleteDraft(ctx, alexID, channelB, uuid.Nil); err != nil || found {
		t.Errorf("DeleteDraft of a missing draft = %v, %v; want not found, no error", found, err)
	}
	if n := e.count(t, "drafts"); n != 3 {
		t.Errorf("%d draft rows after two deletions, want 3", n)
	}
	// Saved again after its deletion, a draft starts at version 1.
	if got := upsert(syncmod.Draft{PrincipalID: alexID, ChannelID: channelB, ContentMD: "Again", UpdatedAt: later}); got.Version != 1 {
		t.Errorf("version after deletion = %d, want 1", got.Version)
	}
}

func TestPersonalStoreSettings(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	ctx := t.Context()
	put := func(who uuid.UUID, key, value string) syncmod.Setting {
		t.Helper()
		got, err := e.store.UpsertSetting(ctx, syncmod.Setting{PrincipalID: who, Key: key, Value: json.RawMessage(value)}, savedTime)
		if err != nil {
			t.Fatalf("UpsertSetting(%s): %v", key, err)
		}
		return got
	}
	got := put(alexID, "theme", `{"mode":"dark","contrast":[1,2]}`)
	if got.Version != 1 || got.Key != "theme" || got.PrincipalID != alexID {
		t.Errorf("first put = %+v", got)
	}
	if !jsonEqual(t, got.Value, []byte(`{"mode":"dark","contrast":[1,2]}`)) {
		t.Errorf("value = %s", got.Value)
	}
	if bytes.ContainsRune(got.Value, ' ') {
		t.Errorf("value %s is not compact", got.Value)
	}
	got = put(alexID, "theme", `"light"`)
	if got.Version != 2 || string(got.Value) != `"light"` {
		t.Errorf("second put = %+v, want version 2 and \"light\"", got)
	}
	if got := put(samID, "theme", `"dark"`); got.Version != 1 {
		t.Errorf("Sam's theme at version %d, want 1: versions are per principal", got.Version)
	}
}

func TestPersonalStoreSettingsList(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	ctx := t.Context()
	for _, s := range []syncmod.Setting{
		{PrincipalID: alexID, Key: "theme", Value: json.RawMessage(`"dark"`)},
		{PrincipalID: alexID, Key: "editor.font", Value: json.RawMessage(`{"size":14}`)},
		{PrincipalID: alexID, Key: "editor-tabs", Value: json.RawMessage(`[2]`)},
		{PrincipalID: samID, Key: "theme", Value: json.RawMessage(`"light"`)},
	} {
		if _, err := e.store.UpsertSetting(ctx, s, savedTime); err != nil {
			t.Fatal(err)
		}
	}
	list, err := e.store.Settings(ctx, alexID)
	if err != nil {
		t.Fatalf("Settings: %v", err)
	}
	var keys []string
	for _, s := range list {
		keys = append(keys, s.Key)
		if s.PrincipalID != alexID || s.Version != 1 {
			t.Errorf("setting %+v: want Alex's at version 1", s)
		}
	}
	if want := []string{"editor-tabs", "editor.font", "theme"}; !slices.Equal(keys, want) {
		t.Errorf("keys %q, want %q (byte order)", keys, want)
	}
	if string(list[1].Value) != `{"size":14}` {
		t.Errorf("editor.font = %s, want {\"size\":14}", list[1].Value)
	}
	none, err := e.store.Settings(ctx, uuid.Must(uuid.NewV7()))
	if err != nil || none == nil || len(none) != 0 {
		t.Errorf("Settings of nobody = %v, %v; want empty, not nil", none, err)
	}
}

// TestPersonalTablesRefuseInvalidRows: the tables' checks back the domain's rules, so a bug in
// the use cases cannot store what clients must never see.
func TestPersonalTablesRefuseInvalidRows(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	ctx := t.Context()
	tests := []struct {
		name string
		call func() error
	}{
		{name: "negative read seq", call: func() error {
			_, err := e.store.UpsertReadState(ctx, syncmod.ReadState{PrincipalID: alexID, ThreadID: threadA1, ChannelID: channelA, LastReadSeq: -1}, savedTime)
			return err
		}},
		{name: "empty draft", call: func() error {
			_, err := e.store.UpsertDraft(ctx, syncmod.Draft{PrincipalID: alexID, ChannelID: channelA, UpdatedAt: savedTime})
			return err
		}},
		{name: "setting key", call: func() error {
			_, err := e.store.UpsertSetting(ctx, syncmod.Setting{PrincipalID: alexID, Key: "Theme", Value: json.RawMessage(`1`)}, savedTime)
			return err
		}},
		{name: "null setting", call: func() error {
			_, err := e.store.UpsertSetting(ctx, syncmod.Setting{PrincipalID: alexID, Key: "theme", Value: json.RawMessage(`null`)}, savedTime)
			return err
		}},
	}
	for _, tc := range tests {
		if err := tc.call(); err == nil {
			t.Errorf("%s: stored, want a check violation", tc.name)
		}
	}
}

func TestPersonalStoreSidebar(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	ctx := t.Context()
	if _, found, err := e.store.Sidebar(ctx, alexID); err != nil || found {
		t.Fatalf("Sidebar before any = %v, %v; want not found", found, err)
	}
	in := syncmod.Sidebar{PrincipalID: alexID, Version: 7, Sections: []syncmod.SidebarSection{
		{Key: "fav", Title: "Favourites", Collapsed: true, ChannelIDs: []uuid.UUID{channelB, channelA}},
		{Key: "quiet", ChannelIDs: []uuid.UUID{}},
	}}
	got, err := e.store.UpsertSidebar(ctx, in, savedTime)
	if err != nil {
		t.Fatalf("UpsertSidebar: %v", err)
	}
	want := in
	want.Version = 1
	if !reflect.DeepEqual(got, want) {
		t.Errorf("UpsertSidebar = %+v, want %+v", got, want)
	}
	read, found, err := e.store.Sidebar(ctx, alexID)
	if err != nil || !found || !reflect.DeepEqual(read, want) {
		t.Errorf("Sidebar = %+v, %v, %v; want %+v", read, found, err, want)
	}
	got, err = e.store.UpsertSidebar(ctx, syncmod.Sidebar{PrincipalID: alexID, Sections: nil}, savedTime)
	if err != nil {
		t.Fatalf("UpsertSidebar(no sections): %v", err)
	}
	if want := (syncmod.Sidebar{PrincipalID: alexID, Version: 2, Sections: []syncmod.SidebarSection{}}); !reflect.DeepEqual(got, want) {
		t.Errorf("UpsertSidebar(no sections) = %+v, want %+v", got, want)
	}
	var sections string
	if err := e.pool.QueryRow(ctx, "SELECT sections::text FROM sync.sidebar WHERE principal_id = $1", alexID).Scan(&sections); err != nil {
		t.Fatal(err)
	}
	if sections != "[]" {
		t.Errorf("stored sections %s, want []", sections)
	}
}

// TestPersonalStoreRollback: writes rolled back with their transaction leave nothing.
func TestPersonalStoreRollback(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	ctx := t.Context()
	if _, err := e.store.UpsertDraft(ctx, syncmod.Draft{PrincipalID: alexID, ChannelID: channelA, ContentMD: "Kept", UpdatedAt: savedTime}); err != nil {
		t.Fatal(err)
	}
	errBoom := errors.New("boom")
	err := e.runner.RunInTx(ctx, func(ctx context.Context) error {
		if _, err := e.store.UpsertReadState(ctx, syncmod.ReadState{PrincipalID: alexID, ThreadID: threadA1, ChannelID: channelA, LastReadSeq: 1}, savedTime); err != nil {
			return err
		}
		if _, err := e.store.UpsertDraft(ctx, syncmod.Draft{PrincipalID: alexID, ChannelID: channelA, ContentMD: "Changed", UpdatedAt: savedTime}); err != nil {
			return err
		}
		if _, _, err := e.store.DeleteDraft(ctx, alexID, channelA, uuid.Nil); err != nil {
			return err
		}
		if _, err := e.store.UpsertSetting(ctx, syncmod.Setting{PrincipalID: alexID, Key: "theme", Value: json.RawMessage(`1`)}, savedTime); err != nil {
			return err
		}
		if _, err := e.store.UpsertSidebar(ctx, syncmod.Sidebar{PrincipalID: alexID}, savedTime); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("RunInTx = %v, want %v", err, errBoom)
	}
	for _, table := range []string{"read_states", "user_settings", "sidebar"} {
		if n := e.count(t, table); n != 0 {
			t.Errorf("%d rows in %s after the rollback, want 0", n, table)
		}
	}
	list, err := e.store.Drafts(ctx, alexID)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ContentMD != "Kept" || list[0].Version != 1 {
		t.Errorf("drafts after the rollback = %+v, want the one kept at version 1", list)
	}
}

// TestPersonalStoreConcurrentUpserts: concurrent writes of one row serialize on its lock; every
// write gets its own version and none is lost.
func TestPersonalStoreConcurrentUpserts(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	const writers = 8
	versions := make(chan int64, 2*writers)
	var wg gosync.WaitGroup
	errs := make(chan error, 2*writers)
	for i := range writers {
		wg.Go(func() {
			s, err := e.store.UpsertSetting(t.Context(), syncmod.Setting{PrincipalID: alexID, Key: "theme", Value: json.RawMessage(fmt.Sprint(i))}, savedTime)
			if err != nil {
				errs <- err
				return
			}
			versions <- s.Version
		})
		wg.Go(func() {
			_, err := e.store.UpsertReadState(t.Context(), syncmod.ReadState{PrincipalID: alexID, ThreadID: threadA1, ChannelID: channelA, LastReadSeq: int64(i)}, savedTime)
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(versions)
	close(errs)
	for err := range errs {
		t.Errorf("concurrent upsert: %v", err)
	}
	var got []int64
	for v := range versions {
		got = append(got, v)
	}
	slices.Sort(got)
	if want := []int64{1, 2, 3, 4, 5, 6, 7, 8}; !slices.Equal(got, want) {
		t.Errorf("versions handed out %v, want %v", got, want)
	}
	states, err := e.store.ReadStates(t.Context(), alexID)
	if err != nil || len(states) != 1 || states[0].Version != writers {
		t.Errorf("read state after %d writes = %+v, %v; want version %d", writers, states, err, writers)
	}
}

// allowAll authorizes every action of an actor.
type allowAll struct{}

func (allowAll) Authorize(ctx context.Context, _ kernel.Action, _ authorize.Resource) error {
	if _, ok := actor.From(ctx); !ok {
		return problem.ErrUnauthenticated
	}
	return nil
}

// places knows channel A (in a space) with its threads A1 (5 messages) and A2.
type places struct{}

func (places) Thread(_ context.Context, id uuid.UUID) (app.ThreadPlace, error) {
	switch id {
	case threadA1:
		return app.ThreadPlace{ThreadID: id, ChannelID: channelA, SpaceID: spaceID, LastMessageSeq: 5}, nil
	case threadA2:
		return app.ThreadPlace{ThreadID: id, ChannelID: channelA, SpaceID: spaceID}, nil
	}
	return app.ThreadPlace{}, problem.ErrNotFound
}

func (places) Channel(_ context.Context, id uuid.UUID) (app.ChannelPlace, error) {
	if id == channelA {
		return app.ChannelPlace{ChannelID: id, SpaceID: spaceID}, nil
	}
	return app.ChannelPlace{}, problem.ErrNotFound
}

// TestPersonalWritesAppendTheirEvents runs the use cases on the real store, runner and
// appender: each write commits its row and its personal event together, a rolled-back one
// neither.
func TestPersonalWritesAppendTheirEvents(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	p, err := app.NewPersonal(app.PersonalDeps{
		Runner: e.runner, Store: e.store, Places: places{}, Authorizer: allowAll{}, Appender: e.appender,
		Clock: clock.NewFake(savedTime), Config: app.PersonalConfig{MaxSettingBytes: 16384, MaxDraftBytes: 16384, Sidebar: domain.SidebarLimits{Sections: 50, Channels: 1000}},
	})
	if err != nil {
		t.Fatalf("NewPersonal: %v", err)
	}
	ctx := actor.With(t.Context(), actor.Actor{PrincipalID: alexID, Kind: actor.KindPerson})

	rs, err := p.UpdateReadState(ctx, threadA1, 9)
	if err != nil || rs.LastReadSeq != 5 || rs.Version != 1 {
		t.Fatalf("UpdateReadState = %+v, %v; want seq 5 (clamped), version 1", rs, err)
	}
	if _, err := p.SaveDraft(ctx, channelA, threadA2, "Thanks, Sam"); err != nil {
		t.Fatalf("SaveDraft: %v", err)
	}
	if err := p.DeleteDraft(ctx, channelA, threadA2); err != nil {
		t.Fatalf("DeleteDraft: %v", err)
	}
	if err := p.DeleteDraft(ctx, channelA, threadA2); err != nil {
		t.Fatalf("DeleteDraft of a missing draft: %v", err)
	}
	s, err := p.PutSetting(ctx, "editor.font", json.RawMessage(`{"size": 14, "family": "mono"}`))
	if err != nil {
		t.Fatalf("PutSetting: %v", err)
	}
	if !jsonEqual(t, s.Value, []byte(`{"family":"mono","size":14}`)) || bytes.ContainsRune(s.Value, ' ') {
		t.Errorf("PutSetting value = %s, want compact {\"family\":\"mono\",\"size\":14}", s.Value)
	}
	if _, err := p.PutSidebar(ctx, []syncmod.SidebarSection{{Key: "fav", Title: "Favourites", ChannelIDs: []uuid.UUID{channelA, channelA}}}); err != nil {
		t.Fatalf("PutSidebar: %v", err)
	}

	errBoom := errors.New("boom")
	err = e.runner.RunInTx(ctx, func(ctx context.Context) error {
		if _, err := p.PutSetting(ctx, "theme", json.RawMessage(`"dark"`)); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("rolled-back PutSetting: %v", err)
	}

	log := e.all(t)
	type row struct {
		typ      string
		kind     kernel.ResourceKind
		resource uuid.UUID
		channel  uuid.UUID
		thread   uuid.UUID
		payload  string
	}
	want := []row{
		{"read_state.updated", kernel.ResourceThread, threadA1, channelA, threadA1,
			`{"thread_id":"` + threadA1.String() + `","channel_id":"` + channelA.String() + `","last_read_seq":5,"version":1}`},
		{"draft.saved", kernel.ResourceChannel, channelA, channelA, threadA2,
			`{"channel_id":"` + channelA.String() + `","thread_id":"` + threadA2.String() + `","content_md":"Thanks, Sam","version":1}`},
		{"draft.deleted", kernel.ResourceChannel, channelA, channelA, threadA2,
			`{"channel_id":"` + channelA.String() + `","thread_id":"` + threadA2.String() + `","version":2}`},
		{"setting.updated", kernel.ResourcePrincipal, alexID, uuid.Nil, uuid.Nil,
			`{"key":"editor.font","value":{"family":"mono","size":14},"version":1}`},
		{"sidebar.updated", kernel.ResourcePrincipal, alexID, uuid.Nil, uuid.Nil,
			`{"sections":[{"key":"fav","title":"Favourites","collapsed":false,"channel_ids":["` + channelA.String() + `"]}],"version":1}`},
	}
	if len(log) != len(want) {
		t.Fatalf("%d events in the log, want %d: %+v", len(log), len(want), log)
	}
	for i, w := range want {
		got := log[i]
		if got.Type != w.typ || got.ResourceKind != w.kind || got.ResourceID != w.resource ||
			got.ChannelID != w.channel || got.ThreadID != w.thread {
			t.Errorf("event %d = %s on %s %s in channel %s thread %s, want %+v", i, got.Type, got.ResourceKind,
				got.ResourceID, got.ChannelID, got.ThreadID, w)
		}
		if got.ActorID != alexID || got.AudienceID != alexID || !got.Personal() {
			t.Errorf("event %d actor %s audience %s, want Alex for both", i, got.ActorID, got.AudienceID)
		}
		if !jsonEqual(t, got.Payload, []byte(w.payload)) {
			t.Errorf("event %d payload %s\nwant %s", i, got.Payload, w.payload)
		}
	}
	if n := e.count(t, "user_settings"); n != 1 {
		t.Errorf("%d settings stored, want 1 (the rolled-back theme absent)", n)
	}
}

// TestPersonalStorePersonalData: the snapshot's one batch gives exactly what the four readers
// give one by one, for a person with every kind of personal data, for another whose rows must
// not mix in, and for nobody (empty lists, the sidebar never stored at version 0).
func TestPersonalStorePersonalData(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	ctx := t.Context()
	for _, who := range []uuid.UUID{alexID, samID} {
		for i, thread := range []uuid.UUID{threadA2, threadA1} {
			if _, err := e.store.UpsertReadState(ctx, syncmod.ReadState{PrincipalID: who, ThreadID: thread, ChannelID: channelA, LastReadSeq: int64(i + 1)}, savedTime); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.store.UpsertDraft(ctx, syncmod.Draft{PrincipalID: who, ChannelID: channelB, ThreadID: threadA1, ContentMD: "Later", UpdatedAt: savedTime}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.UpsertDraft(ctx, syncmod.Draft{PrincipalID: who, ChannelID: channelB, ContentMD: "New", UpdatedAt: savedTime}); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"theme", "editor.font"} {
			if _, err := e.store.UpsertSetting(ctx, syncmod.Setting{PrincipalID: who, Key: key, Value: json.RawMessage(`{"a": [1, 2]}`)}, savedTime); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := e.store.UpsertSidebar(ctx, syncmod.Sidebar{PrincipalID: alexID, Sections: []syncmod.SidebarSection{{Key: "fav", Title: "Favourites", ChannelIDs: []uuid.UUID{channelB}}}}, savedTime); err != nil {
		t.Fatal(err)
	}
	for _, who := range []uuid.UUID{alexID, samID, uuid.Must(uuid.NewV7())} {
		got, err := e.store.PersonalData(ctx, who)
		if err != nil {
			t.Fatalf("PersonalData: %v", err)
		}
		var want app.PersonalData
		if want.ReadStates, err = e.store.ReadStates(ctx, who); err != nil {
			t.Fatal(err)
		}
		if want.Settings, err = e.store.Settings(ctx, who); err != nil {
			t.Fatal(err)
		}
		if want.Drafts, err = e.store.Drafts(ctx, who); err != nil {
			t.Fatal(err)
		}
		sb, found, err := e.store.Sidebar(ctx, who)
		if err != nil {
			t.Fatal(err)
		}
		if !found {
			sb = syncmod.Sidebar{PrincipalID: who, Sections: []syncmod.SidebarSection{}}
		}
		want.Sidebar = sb
		if !reflect.DeepEqual(got, want) {
			t.Errorf("PersonalData(%s) = %+v, want %+v", who, got, want)
		}
		if got.ReadStates == nil || got.Settings == nil || got.Drafts == nil {
			t.Errorf("PersonalData(%s) has a nil list: %+v", who, got)
		}
	}
	if got, err := e.store.PersonalData(ctx, alexID); err != nil || len(got.ReadStates) != 2 || len(got.Drafts) != 2 || len(got.Settings) != 2 || got.Sidebar.Version != 1 {
		t.Errorf("PersonalData(Alex) = %+v, %v; want two of each and the sidebar at version 1", got, err)
	}
}

// TestPersonalStoreErrorsAreWrapped: a failed statement reaches the caller wrapped with %w, so
// errors.Is still finds the cause.
func TestPersonalStoreErrorsAreWrapped(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	calls := map[string]func() error{
		"UpsertReadState": func() error {
			_, err := e.store.UpsertReadState(ctx, syncmod.ReadState{PrincipalID: alexID, ThreadID: threadA1, ChannelID: channelA}, savedTime)
			return err
		},
		"ReadStates": func() error { _, err := e.store.ReadStates(ctx, alexID); return err },
		"UpsertDraft": func() error {
			_, err := e.store.UpsertDraft(ctx, syncmod.Draft{PrincipalID: alexID, ChannelID: channelA, ContentMD: "Hi", UpdatedAt: savedTime})
			return err
		},
		"DeleteDraft": func() error { _, _, err := e.store.DeleteDraft(ctx, alexID, channelA, uuid.Nil); return err },
		"Drafts":      func() error { _, err := e.store.Drafts(ctx, alexID); return err },
		"UpsertSetting": func() error {
			_, err := e.store.UpsertSetting(ctx, syncmod.Setting{PrincipalID: alexID, Key: "theme", Value: json.RawMessage(`1`)}, savedTime)
			return err
		},
		"Settings": func() error { _, err := e.store.Settings(ctx, alexID); return err },
		"UpsertSidebar": func() error {
			_, err := e.store.UpsertSidebar(ctx, syncmod.Sidebar{PrincipalID: alexID}, savedTime)
			return err
		},
		"Sidebar":      func() error { _, _, err := e.store.Sidebar(ctx, alexID); return err },
		"PersonalData": func() error { _, err := e.store.PersonalData(ctx, alexID); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: err = %v, want one wrapping context.Canceled", name, err)
		}
	}
}

// TestPersonalStoreAdvanceReadState: the own-post read state is created at version 1, moves
// forward with its version raised, and is left alone (no row returned, nothing changed) when
// it is already at or past the seq: it never moves backwards.
func TestPersonalStoreAdvanceReadState(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	ctx := t.Context()
	rs := func(seq int64) syncmod.ReadState {
		return syncmod.ReadState{PrincipalID: samID, ThreadID: threadA1, ChannelID: channelA, LastReadSeq: seq}
	}
	for i, step := range []struct {
		seq       int64
		wantMoved bool
		wantSeq   int64
		wantVer   int64
	}{
		{2, true, 2, 1},  // no row yet
		{5, true, 5, 2},  // behind
		{5, false, 5, 2}, // at
		{3, false, 5, 2}, // past: never backwards
		{6, true, 6, 3},
	} {
		got, moved, err := e.store.AdvanceReadState(ctx, rs(step.seq), savedTime)
		if err != nil {
			t.Fatalf("step %d: AdvanceReadState: %v", i, err)
		}
		if moved != step.wantMoved || (moved && (got.LastReadSeq != step.wantSeq || got.Version != step.wantVer)) {
			t.Fatalf("step %d: AdvanceReadState(%d) = %+v moved %v, want moved %v", i, step.seq, got, moved, step.wantMoved)
		}
		list, err := e.store.ReadStates(ctx, samID)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].LastReadSeq != step.wantSeq || list[0].Version != step.wantVer {
			t.Fatalf("step %d: stored %+v, want seq %d at version %d", i, list, step.wantSeq, step.wantVer)
		}
	}
	// An explicit read state may still go back; the next post moves it forward again.
	if _, err := e.store.UpsertReadState(ctx, rs(1), savedTime); err != nil {
		t.Fatal(err)
	}
	if got, moved, err := e.store.AdvanceReadState(ctx, rs(7), savedTime); err != nil || !moved || got.LastReadSeq != 7 || got.Version != 5 {
		t.Fatalf("after going back, AdvanceReadState(7) = %+v moved %v err %v", got, moved, err)
	}
}
