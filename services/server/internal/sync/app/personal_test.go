package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/authorize/authorizetest"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/sync/domain"
)

var _ syncmod.Personal = (*app.Personal)(nil)

// wantEvent is what one appended personal event must be; its actor and audience are the
// owner the check is given.
type wantEvent struct {
	typ                      string
	kind                     kernel.ResourceKind
	resource                 uuid.UUID
	space, channel, threadID uuid.UUID
	payload                  string // JSON
}

// checkEvents fails unless the committed events are exactly want, in order, each with actor
// and audience owner.
func checkEvents(t *testing.T, got []kernel.Event, owner uuid.UUID, want ...wantEvent) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d events committed, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		e := got[i]
		if e.Type != w.typ || e.ResourceKind != w.kind || e.ResourceID != w.resource {
			t.Errorf("event %d = %s on %s %s, want %s on %s %s", i, e.Type, e.ResourceKind, e.ResourceID, w.typ, w.kind, w.resource)
		}
		if e.SpaceID != w.space || e.ChannelID != w.channel || e.ThreadID != w.threadID {
			t.Errorf("event %d placed in space %s channel %s thread %s, want %s %s %s", i,
				e.SpaceID, e.ChannelID, e.ThreadID, w.space, w.channel, w.threadID)
		}
		if e.ActorID != owner || e.AudienceID != owner {
			t.Errorf("event %d actor %s audience %s, want both %s", i, e.ActorID, e.AudienceID, owner)
		}
		payload, err := json.Marshal(e.Payload)
		if err != nil {
			t.Fatalf("event %d payload: %v", i, err)
		}
		if !jsonEqual(t, payload, []byte(w.payload)) {
			t.Errorf("event %d payload = %s\nwant %s", i, payload, w.payload)
		}
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("json %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("json %s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// checkAuth fails unless the authorizer was asked exactly want, by owner.
func checkAuth(t *testing.T, calls []authorizetest.Call, owner uuid.UUID, want ...authCall) {
	t.Helper()
	var got []authCall
	for _, c := range calls {
		if c.Authenticated { // a call without an actor is refused before anything is asked
			got = append(got, authCall{actorID: c.Actor.PrincipalID, action: c.Action, res: c.Res})
		}
	}
	for i := range want {
		want[i].actorID = owner
	}
	if !slices.Equal(got, want) {
		t.Errorf("authorizer calls = %+v\nwant %+v", got, want)
	}
}

func TestNewPersonal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(*app.PersonalDeps)
		want   string
	}{
		{name: "runner", change: func(d *app.PersonalDeps) { d.Runner = nil }, want: "runner"},
		{name: "store", change: func(d *app.PersonalDeps) { d.Store = nil }, want: "store"},
		{name: "places", change: func(d *app.PersonalDeps) { d.Places = nil }, want: "places"},
		{name: "authorizer", change: func(d *app.PersonalDeps) { d.Authorizer = nil }, want: "authorizer"},
		{name: "appender", change: func(d *app.PersonalDeps) { d.Appender = nil }, want: "appender"},
		{name: "clock", change: func(d *app.PersonalDeps) { d.Clock = nil }, want: "clock"},
		{name: "config", change: func(d *app.PersonalDeps) { d.Config.MaxDraftBytes = 0 }, want: "sync.max_draft_bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			deps := newPersonalEnv(t).deps()
			tc.change(&deps)
			_, err := app.NewPersonal(deps)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewPersonal: err = %v, want one naming %q", err, tc.want)
			}
		})
	}
}

func TestPersonalConfig(t *testing.T) {
	t.Parallel()
	r := config.NewRegister()
	// The register of this test mirrors the package's keys, so Load can read them.
	for _, k := range []config.Key{app.KeyMaxSettingBytes, app.KeyMaxDraftBytes, app.KeyMaxSidebarSections, app.KeyMaxSidebarChannels} {
		r.Define(k.Name, k.Kind, k.Default, k.Meaning)
	}
	cfg, err := r.Load("", []string{"BOTHY_SYNC_MAX_DRAFT_BYTES=4096", "BOTHY_SYNC_MAX_SIDEBAR_SECTIONS=7"})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	got := app.PersonalConfigFrom(cfg)
	if err := cfg.Err(); err != nil {
		t.Fatalf("config: %v", err)
	}
	if got != (app.PersonalConfig{MaxSettingBytes: 16384, MaxDraftBytes: 4096, Sidebar: domain.SidebarLimits{Sections: 7, Channels: 1000}}) {
		t.Errorf("PersonalConfigFrom = %+v, want the default 16384 setting bytes, 4096 draft bytes, 7 sidebar sections and the default 1000 channels", got)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate = %v, want nil", err)
	}
	ok := domain.SidebarLimits{Sections: 1, Channels: 1}
	for _, bad := range []app.PersonalConfig{
		{MaxSettingBytes: 0, MaxDraftBytes: 1, Sidebar: ok}, {MaxSettingBytes: 1, MaxDraftBytes: 0, Sidebar: ok},
		{MaxSettingBytes: 1, MaxDraftBytes: 1, Sidebar: domain.SidebarLimits{Sections: 0, Channels: 1}},
		{MaxSettingBytes: 1, MaxDraftBytes: 1, Sidebar: domain.SidebarLimits{Sections: 1, Channels: 0}},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", bad)
		}
	}
}

func TestUpdateReadState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		thread   uuid.UUID
		seqs     []int64 // written in turn
		want     syncmod.ReadState
		space    uuid.UUID
		channel  uuid.UUID
		wantSeqs []int64 // last_read_seq of each event
	}{
		{
			name: "first read", thread: thread, seqs: []int64{3},
			want:  syncmod.ReadState{PrincipalID: alex, ThreadID: thread, ChannelID: channel, LastReadSeq: 3, Version: 1},
			space: space, channel: channel, wantSeqs: []int64{3},
		},
		{
			name: "beyond the newest message is clamped", thread: thread, seqs: []int64{12},
			want:  syncmod.ReadState{PrincipalID: alex, ThreadID: thread, ChannelID: channel, LastReadSeq: 7, Version: 1},
			space: space, channel: channel, wantSeqs: []int64{7},
		},
		{
			name: "every write raises the version, also backwards", thread: thread, seqs: []int64{5, 7, 2},
			want:  syncmod.ReadState{PrincipalID: alex, ThreadID: thread, ChannelID: channel, LastReadSeq: 2, Version: 3},
			space: space, channel: channel, wantSeqs: []int64{5, 7, 2},
		},
		{
			name: "empty thread", thread: thread2, seqs: []int64{1},
			want:  syncmod.ReadState{PrincipalID: alex, ThreadID: thread2, ChannelID: channel, LastReadSeq: 0, Version: 1},
			space: space, channel: channel, wantSeqs: []int64{0},
		},
		{
			name: "direct message, in no space", thread: dmThread, seqs: []int64{4},
			want:    syncmod.ReadState{PrincipalID: alex, ThreadID: dmThread, ChannelID: dm, LastReadSeq: 4, Version: 1},
			channel: dm, wantSeqs: []int64{4},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newPersonalEnv(t)
			var got syncmod.ReadState
			var want []wantEvent
			var wantAuth []authCall
			for i, seq := range tc.seqs {
				var err error
				got, err = e.personal.UpdateReadState(as(t, alex), tc.thread, seq)
				if err != nil {
					t.Fatalf("UpdateReadState(%d): %v", seq, err)
				}
				want = append(want, wantEvent{
					typ: app.EventReadStateUpdated, kind: kernel.ResourceThread, resource: tc.thread,
					space: tc.space, channel: tc.channel, threadID: tc.thread,
					payload: `{"thread_id":"` + tc.thread.String() + `","channel_id":"` + tc.channel.String() +
						`","last_read_seq":` + itoa(tc.wantSeqs[i]) + `,"version":` + itoa(int64(i+1)) + `}`,
				})
				wantAuth = append(wantAuth, authCall{action: kernel.ActionReadStateWrite, res: authorize.Resource{
					Kind: kernel.ResourceThread, ID: tc.thread, SpaceID: tc.space, ChannelID: tc.channel, ThreadID: tc.thread,
				}})
			}
			if got != tc.want {
				t.Errorf("UpdateReadState = %+v, want %+v", got, tc.want)
			}
			if stored := e.world.readStates[[2]uuid.UUID{alex, tc.thread}]; stored != tc.want {
				t.Errorf("stored %+v, want %+v", stored, tc.want)
			}
			checkEvents(t, e.world.committed, alex, want...)
			checkAuth(t, e.auth.Calls(), alex, wantAuth...)
		})
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestSaveDraft(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	ctx := as(t, alex)
	saves := []struct {
		channel, thread uuid.UUID
		content         string
		want            syncmod.Draft
		event           wantEvent
	}{
		{
			channel: channel, content: "Hi Sam",
			want: syncmod.Draft{PrincipalID: alex, ChannelID: channel, ContentMD: "Hi Sam", Version: 1, UpdatedAt: start},
			event: wantEvent{
				typ: app.EventDraftSaved, kind: kernel.ResourceChannel, resource: channel, space: space, channel: channel,
				payload: `{"channel_id":"` + channel.String() + `","content_md":"Hi Sam","version":1}`,
			},
		},
		{
			channel: channel, thread: thread, content: "Thanks, Robin",
			want: syncmod.Draft{PrincipalID: alex, ChannelID: channel, ThreadID: thread, ContentMD: "Thanks, Robin", Version: 1, UpdatedAt: start},
			event: wantEvent{
				typ: app.EventDraftSaved, kind: kernel.ResourceChannel, resource: channel, space: space, channel: channel, threadID: thread,
				payload: `{"channel_id":"` + channel.String() + `","thread_id":"` + thread.String() + `","content_md":"Thanks, Robin","version":1}`,
			},
		},
		{
			channel: channel, content: "Hi Sam and Robin",
			want: syncmod.Draft{PrincipalID: alex, ChannelID: channel, ContentMD: "Hi Sam and Robin", Version: 2, UpdatedAt: start},
			event: wantEvent{
				typ: app.EventDraftSaved, kind: kernel.ResourceChannel, resource: channel, space: space, channel: channel,
				payload: `{"channel_id":"` + channel.String() + `","content_md":"Hi Sam and Robin","version":2}`,
			},
		},
		{
			channel: dm, thread: dmThread, content: "  ",
			want: syncmod.Draft{PrincipalID: alex, ChannelID: dm, ThreadID: dmThread, ContentMD: "  ", Version: 1, UpdatedAt: start},
			event: wantEvent{
				typ: app.EventDraftSaved, kind: kernel.ResourceChannel, resource: dm, channel: dm, threadID: dmThread,
				payload: `{"channel_id":"` + dm.String() + `","thread_id":"` + dmThread.String() + `","content_md":"  ","version":1}`,
			},
		},
	}
	var events []wantEvent
	var auth []authCall
	for _, s := range saves {
		got, err := e.personal.SaveDraft(ctx, s.channel, s.thread, s.content)
		if err != nil {
			t.Fatalf("SaveDraft(%s, %s): %v", s.channel, s.thread, err)
		}
		if got != s.want {
			t.Errorf("SaveDraft = %+v, want %+v", got, s.want)
		}
		events = append(events, s.event)
		spaceOf := e.places.channels[s.channel].SpaceID
		auth = append(auth, authCall{action: kernel.ActionDraftWrite, res: authorize.Resource{
			Kind: kernel.ResourceChannel, ID: s.channel, SpaceID: spaceOf, ChannelID: s.channel,
		}})
	}
	if len(e.world.drafts) != 3 {
		t.Errorf("%d drafts stored, want 3 (the channel's, its thread's, the direct message's)", len(e.world.drafts))
	}
	checkEvents(t, e.world.committed, alex, events...)
	checkAuth(t, e.auth.Calls(), alex, auth...)
}

func TestDeleteDraft(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	ctx := as(t, alex)
	for range 2 {
		if _, err := e.personal.SaveDraft(ctx, channel, thread, "Sam, see above"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.personal.SaveDraft(ctx, channel, uuid.Nil, "New thread"); err != nil {
		t.Fatal(err)
	}
	e.world.committed = nil
	e.auth.Reset()

	if err := e.personal.DeleteDraft(ctx, channel, thread); err != nil {
		t.Fatalf("DeleteDraft: %v", err)
	}
	if _, ok := e.world.drafts[draftKey{alex, channel, thread}]; ok {
		t.Error("the thread's draft is still stored")
	}
	if _, ok := e.world.drafts[draftKey{alex, channel, uuid.Nil}]; !ok {
		t.Error("the channel's own draft was deleted too")
	}
	checkEvents(t, e.world.committed, alex, wantEvent{
		typ: app.EventDraftDeleted, kind: kernel.ResourceChannel, resource: channel, space: space, channel: channel, threadID: thread,
		payload: `{"channel_id":"` + channel.String() + `","thread_id":"` + thread.String() + `","version":3}`,
	})
	channelRes := authorize.Resource{Kind: kernel.ResourceChannel, ID: channel, SpaceID: space, ChannelID: channel}
	checkAuth(t, e.auth.Calls(), alex, authCall{action: kernel.ActionDraftWrite, res: channelRes})

	// Deleting it again succeeds, is still authorized, and appends nothing.
	e.world.committed = nil
	e.auth.Reset()
	if err := e.personal.DeleteDraft(ctx, channel, thread); err != nil {
		t.Fatalf("DeleteDraft of a missing draft: %v", err)
	}
	checkEvents(t, e.world.committed, alex)
	checkAuth(t, e.auth.Calls(), alex, authCall{action: kernel.ActionDraftWrite, res: channelRes})

	// The channel's own draft, whose payload has no thread id.
	e.world.committed = nil
	if err := e.personal.DeleteDraft(ctx, channel, uuid.Nil); err != nil {
		t.Fatalf("DeleteDraft of the channel's draft: %v", err)
	}
	checkEvents(t, e.world.committed, alex, wantEvent{
		typ: app.EventDraftDeleted, kind: kernel.ResourceChannel, resource: channel, space: space, channel: channel,
		payload: `{"channel_id":"` + channel.String() + `","version":2}`,
	})

	// A draft saved after its deletion starts again at version 1.
	d, err := e.personal.SaveDraft(ctx, channel, thread, "Robin, see above")
	if err != nil {
		t.Fatal(err)
	}
	if d.Version != 1 {
		t.Errorf("version after deletion = %d, want 1", d.Version)
	}
}

func TestDeleteDraftInArchivedChannel(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	ctx := as(t, alex)
	e.world.drafts[draftKey{alex, archived, uuid.Nil}] = syncmod.Draft{
		PrincipalID: alex, ChannelID: archived, ContentMD: "Before the archive", Version: 1, UpdatedAt: start,
	}
	if err := e.personal.DeleteDraft(ctx, archived, uuid.Nil); err != nil {
		t.Fatalf("DeleteDraft in an archived channel: %v", err)
	}
	checkEvents(t, e.world.committed, alex, wantEvent{
		typ: app.EventDraftDeleted, kind: kernel.ResourceChannel, resource: archived, space: space, channel: archived,
		payload: `{"channel_id":"` + archived.String() + `","version":2}`,
	})
}

func TestPutSetting(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	ctx := as(t, alex)
	got, err := e.personal.PutSetting(ctx, "editor.font", json.RawMessage(`{ "size": 14, "family": "mono" }`))
	if err != nil {
		t.Fatalf("PutSetting: %v", err)
	}
	want := syncmod.Setting{PrincipalID: alex, Key: "editor.font", Value: json.RawMessage(`{"family":"mono","size":14}`), Version: 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PutSetting = %+v, want %+v", got, want)
	}
	got, err = e.personal.PutSetting(ctx, "editor.font", json.RawMessage(`"mono"`))
	if err != nil {
		t.Fatalf("PutSetting again: %v", err)
	}
	if got.Version != 2 || string(got.Value) != `"mono"` {
		t.Errorf("PutSetting again = %+v, want version 2 and value \"mono\"", got)
	}
	principalEvent := func(payload string) wantEvent {
		return wantEvent{typ: app.EventSettingUpdated, kind: kernel.ResourcePrincipal, resource: alex, payload: payload}
	}
	checkEvents(t, e.world.committed, alex,
		principalEvent(`{"key":"editor.font","value":{"family":"mono","size":14},"version":1}`),
		principalEvent(`{"key":"editor.font","value":"mono","version":2}`),
	)
	self := authorize.Resource{Kind: kernel.ResourcePrincipal, ID: alex}
	checkAuth(t, e.auth.Calls(), alex,
		authCall{action: kernel.ActionSettingWrite, res: self}, authCall{action: kernel.ActionSettingWrite, res: self})
}

func TestPutSidebar(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	ctx := as(t, alex)
	got, err := e.personal.PutSidebar(ctx, []syncmod.SidebarSection{
		{Key: "fav", Title: "Favourites", Collapsed: true, ChannelIDs: []uuid.UUID{other, channel, other}},
		{Key: "dms", Title: "People"},
	})
	if err != nil {
		t.Fatalf("PutSidebar: %v", err)
	}
	want := syncmod.Sidebar{PrincipalID: alex, Version: 1, Sections: []syncmod.SidebarSection{
		{Key: "fav", Title: "Favourites", Collapsed: true, ChannelIDs: []uuid.UUID{other, channel}},
		{Key: "dms", Title: "People", ChannelIDs: []uuid.UUID{}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PutSidebar = %+v, want %+v", got, want)
	}
	if stored := e.world.sidebars[alex]; !reflect.DeepEqual(stored, want) {
		t.Errorf("stored %+v, want %+v", stored, want)
	}
	got, err = e.personal.PutSidebar(ctx, nil)
	if err != nil {
		t.Fatalf("PutSidebar(nil): %v", err)
	}
	if want := (syncmod.Sidebar{PrincipalID: alex, Version: 2, Sections: []syncmod.SidebarSection{}}); !reflect.DeepEqual(got, want) {
		t.Errorf("PutSidebar(nil) = %+v, want %+v", got, want)
	}
	principalEvent := func(payload string) wantEvent {
		return wantEvent{typ: app.EventSidebarUpdated, kind: kernel.ResourcePrincipal, resource: alex, payload: payload}
	}
	checkEvents(t, e.world.committed, alex,
		principalEvent(`{"sections":[`+
			`{"key":"fav","title":"Favourites","collapsed":true,"channel_ids":["`+other.String()+`","`+channel.String()+`"]},`+
			`{"key":"dms","title":"People","collapsed":false,"channel_ids":[]}],"version":1}`),
		principalEvent(`{"sections":[],"version":2}`),
	)
	self := authorize.Resource{Kind: kernel.ResourcePrincipal, ID: alex}
	checkAuth(t, e.auth.Calls(), alex,
		authCall{action: kernel.ActionSettingWrite, res: self}, authCall{action: kernel.ActionSettingWrite, res: self})
}

var errDB = errors.New("database is down")

// TestPersonalWritesFail: a write that fails leaves every row and the log as they were, and
// answers with the error's kind.
func TestPersonalWritesFail(t *testing.T) {
	t.Parallel()
	type call func(ctx context.Context, p *app.Personal) error
	readState := func(th uuid.UUID, seq int64) call {
		return func(ctx context.Context, p *app.Personal) error {
			_, err := p.UpdateReadState(ctx, th, seq)
			return err
		}
	}
	saveDraft := func(ch, th uuid.UUID, content string) call {
		return func(ctx context.Context, p *app.Personal) error {
			_, err := p.SaveDraft(ctx, ch, th, content)
			return err
		}
	}
	deleteDraft := func(ch, th uuid.UUID) call {
		return func(ctx context.Context, p *app.Personal) error { return p.DeleteDraft(ctx, ch, th) }
	}
	putSetting := func(key, value string) call {
		return func(ctx context.Context, p *app.Personal) error {
			_, err := p.PutSetting(ctx, key, json.RawMessage(value))
			return err
		}
	}
	putSidebar := func(sections ...syncmod.SidebarSection) call {
		return func(ctx context.Context, p *app.Personal) error { _, err := p.PutSidebar(ctx, sections); return err }
	}
	fav := syncmod.SidebarSection{Key: "fav", ChannelIDs: []uuid.UUID{channel}}
	denyNotFound := func(a kernel.Action) func(e personalEnv) {
		return func(e personalEnv) { e.auth.Rule = denyActions(map[kernel.Action]error{a: problem.ErrNotFound}) }
	}
	denyForbidden := func(a kernel.Action) func(e personalEnv) {
		return func(e personalEnv) { e.auth.Rule = denyActions(map[kernel.Action]error{a: problem.ErrForbidden}) }
	}
	placesDown := func(e personalEnv) { e.places.err = errDB }
	writeFails := func(e personalEnv) { e.world.failWrite = errDB }
	appendFails := func(e personalEnv) { e.world.failAppend = errDB }
	withDraft := func(e personalEnv) {
		e.world.drafts[draftKey{alex, channel, thread}] = syncmod.Draft{
			PrincipalID: alex, ChannelID: channel, ThreadID: thread, ContentMD: "Sam?", Version: 4, UpdatedAt: start,
		}
	}
	tests := []struct {
		name      string
		setup     func(e personalEnv)
		anonymous bool
		call      call
		want      error
		// noPlaces: refused before any place is looked up; noAuth: before authorization.
		noPlaces, noAuth bool
	}{
		{name: "read state without actor", anonymous: true, call: readState(thread, 1), want: problem.ErrUnauthenticated, noPlaces: true, noAuth: true},
		{name: "read state negative", call: readState(thread, -1), want: problem.ErrValidation, noPlaces: true, noAuth: true},
		{name: "read state of no thread", call: readState(nowhere, 1), want: problem.ErrNotFound, noAuth: true},
		{name: "read state places fail", setup: placesDown, call: readState(thread, 1), want: errDB, noAuth: true},
		{name: "read state invisible", setup: denyNotFound(kernel.ActionReadStateWrite), call: readState(thread, 1), want: problem.ErrNotFound},
		{name: "read state forbidden", setup: denyForbidden(kernel.ActionReadStateWrite), call: readState(thread, 1), want: problem.ErrForbidden},
		{name: "read state store fails", setup: writeFails, call: readState(thread, 1), want: errDB},
		{name: "read state append fails", setup: appendFails, call: readState(thread, 1), want: errDB},

		{name: "draft without actor", anonymous: true, call: saveDraft(channel, uuid.Nil, "Hi"), want: problem.ErrUnauthenticated, noPlaces: true, noAuth: true},
		{name: "draft empty", call: saveDraft(channel, uuid.Nil, ""), want: problem.ErrValidation, noPlaces: true, noAuth: true},
		{name: "draft too long", call: saveDraft(channel, uuid.Nil, strings.Repeat("a", 17)), want: problem.ErrValidation, noPlaces: true, noAuth: true},
		{name: "draft in no channel", call: saveDraft(nowhere, uuid.Nil, "Hi"), want: problem.ErrNotFound, noAuth: true},
		{name: "draft in no thread", call: saveDraft(channel, nowhere, "Hi"), want: problem.ErrNotFound},
		{name: "draft in a thread of another channel", call: saveDraft(channel, otherTh, "Hi"), want: problem.ErrNotFound},
		{name: "draft places fail", setup: placesDown, call: saveDraft(channel, uuid.Nil, "Hi"), want: errDB, noAuth: true},
		{name: "draft invisible", setup: denyNotFound(kernel.ActionDraftWrite), call: saveDraft(channel, thread, "Hi"), want: problem.ErrNotFound},
		{name: "draft forbidden", setup: denyForbidden(kernel.ActionDraftWrite), call: saveDraft(channel, uuid.Nil, "Hi"), want: problem.ErrForbidden},
		{name: "draft in an archived channel", call: saveDraft(archived, uuid.Nil, "Hi"), want: problem.ErrConflict},
		{name: "draft in a thread of an archived channel", call: saveDraft(archived, archivedTh, "Hi"), want: problem.ErrConflict},
		{name: "draft store fails", setup: writeFails, call: saveDraft(channel, uuid.Nil, "Hi"), want: errDB},
		{name: "draft append fails", setup: appendFails, call: saveDraft(channel, uuid.Nil, "Hi"), want: errDB},

		{name: "delete draft without actor", anonymous: true, setup: withDraft, call: deleteDraft(channel, thread), want: problem.ErrUnauthenticated, noPlaces: true, noAuth: true},
		{name: "delete draft in no channel", setup: withDraft, call: deleteDraft(nowhere, uuid.Nil), want: problem.ErrNotFound, noAuth: true},
		{name: "delete draft in no thread", setup: withDraft, call: deleteDraft(channel, nowhere), want: problem.ErrNotFound},
		{name: "delete draft of a thread of another channel", setup: withDraft, call: deleteDraft(other, thread), want: problem.ErrNotFound},
		{name: "delete draft places fail", setup: func(e personalEnv) { withDraft(e); placesDown(e) }, call: deleteDraft(channel, thread), want: errDB, noAuth: true},
		{name: "delete draft invisible", setup: func(e personalEnv) { withDraft(e); denyNotFound(kernel.ActionDraftWrite)(e) }, call: deleteDraft(channel, thread), want: problem.ErrNotFound},
		{name: "delete draft forbidden", setup: func(e personalEnv) { withDraft(e); denyForbidden(kernel.ActionDraftWrite)(e) }, call: deleteDraft(channel, thread), want: problem.ErrForbidden},
		{name: "delete draft store fails", setup: func(e personalEnv) { withDraft(e); writeFails(e) }, call: deleteDraft(channel, thread), want: errDB},
		{name: "delete draft append fails", setup: func(e personalEnv) { withDraft(e); appendFails(e) }, call: deleteDraft(channel, thread), want: errDB},

		{name: "setting without actor", anonymous: true, call: putSetting("theme", `"dark"`), want: problem.ErrUnauthenticated, noPlaces: true, noAuth: true},
		{name: "setting bad key", call: putSetting("Theme", `"dark"`), want: problem.ErrValidation, noPlaces: true, noAuth: true},
		{name: "setting null", call: putSetting("theme", `null`), want: problem.ErrValidation, noPlaces: true, noAuth: true},
		{name: "setting too large", call: putSetting("theme", `"`+strings.Repeat("d", 31)+`"`), want: problem.ErrValidation, noPlaces: true, noAuth: true},
		{name: "setting forbidden", setup: denyForbidden(kernel.ActionSettingWrite), call: putSetting("theme", `"dark"`), want: problem.ErrForbidden, noPlaces: true},
		{name: "setting store fails", setup: writeFails, call: putSetting("theme", `"dark"`), want: errDB, noPlaces: true},
		{name: "setting append fails", setup: appendFails, call: putSetting("theme", `"dark"`), want: errDB, noPlaces: true},

		{name: "sidebar without actor", anonymous: true, call: putSidebar(fav), want: problem.ErrUnauthenticated, noPlaces: true, noAuth: true},
		{name: "sidebar duplicate keys", call: putSidebar(fav, fav), want: problem.ErrValidation, noPlaces: true, noAuth: true},
		{name: "sidebar forbidden", setup: denyForbidden(kernel.ActionSettingWrite), call: putSidebar(fav), want: problem.ErrForbidden, noPlaces: true},
		{name: "sidebar store fails", setup: writeFails, call: putSidebar(fav), want: errDB, noPlaces: true},
		{name: "sidebar append fails", setup: appendFails, call: putSidebar(fav), want: errDB, noPlaces: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newPersonalEnv(t)
			if tc.setup != nil {
				tc.setup(e)
			}
			before := e.world.state()
			ctx := as(t, alex)
			if tc.anonymous {
				ctx = t.Context()
			}
			err := tc.call(ctx, e.personal)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if after := e.world.state(); !reflect.DeepEqual(after, before) {
				t.Errorf("the failed write changed the world:\nbefore %+v\nafter  %+v", before, after)
			}
			if len(e.world.staged) != 0 {
				t.Errorf("%d events left staged", len(e.world.staged))
			}
			if tc.noPlaces && e.places.calls != 0 {
				t.Errorf("%d place lookups, want none", e.places.calls)
			}
			if tc.noAuth && len(e.auth.Calls()) != 0 {
				t.Errorf("authorizer asked %+v, want nothing", e.auth.Calls())
			}
			if !tc.noAuth && len(e.auth.Calls()) != 1 {
				t.Errorf("authorizer asked %d times, want once", len(e.auth.Calls()))
			}
		})
	}
}

// TestPersonalValidationNamesFields: each invalid input is one validation error naming the
// request's JSON fields.
func TestPersonalValidationNamesFields(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	ctx := as(t, alex)
	_, errRead := e.personal.UpdateReadState(ctx, thread, -1)
	_, errDraft := e.personal.SaveDraft(ctx, channel, uuid.Nil, "")
	_, errSetting := e.personal.PutSetting(ctx, "", nil)
	_, errSidebar := e.personal.PutSidebar(ctx, []syncmod.SidebarSection{{Key: ""}})
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{name: "read state", err: errRead, want: []string{"last_read_seq"}},
		{name: "draft", err: errDraft, want: []string{"content_md"}},
		{name: "setting", err: errSetting, want: []string{"key", "value"}},
		{name: "sidebar", err: errSidebar, want: []string{"sections"}},
	}
	for _, tc := range tests {
		p := problem.From(t.Context(), tc.err)
		var got []string
		for _, f := range p.Errors {
			got = append(got, f.Field)
		}
		if p.Code != "validation_failed" || !slices.Equal(got, tc.want) {
			t.Errorf("%s: problem %s naming %v, want validation_failed naming %v", tc.name, p.Code, got, tc.want)
		}
	}
}

// TestPersonalJoinsCallersTransaction: a write inside the caller's transaction commits or rolls
// back with it (the Idempotency-Key middleware runs handlers in one transaction).
func TestPersonalJoinsCallersTransaction(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	errLater := errors.New("a later step of the caller failed")
	err := e.world.RunInTx(as(t, alex), func(ctx context.Context) error {
		if _, err := e.personal.PutSetting(ctx, "theme", json.RawMessage(`"dark"`)); err != nil {
			return err
		}
		return errLater
	})
	if !errors.Is(err, errLater) {
		t.Fatalf("RunInTx = %v, want %v", err, errLater)
	}
	if len(e.world.settings) != 0 || len(e.world.committed) != 0 {
		t.Errorf("after the caller's rollback: %d settings, %d events; want none", len(e.world.settings), len(e.world.committed))
	}
	err = e.world.RunInTx(as(t, alex), func(ctx context.Context) error {
		_, err := e.personal.PutSetting(ctx, "theme", json.RawMessage(`"dark"`))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if e.world.txs != 2 || len(e.world.settings) != 1 || len(e.world.committed) != 1 {
		t.Errorf("%d transactions, %d settings, %d events; want the caller's 2, 1 and 1", e.world.txs, len(e.world.settings), len(e.world.committed))
	}
}

func TestPersonalReaders(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	ctx := t.Context()

	// Nothing stored yet: empty, not nil.
	states, err := e.personal.ReadStates(ctx, alex)
	if err != nil || states == nil || len(states) != 0 {
		t.Errorf("ReadStates = %v, %v; want an empty map", states, err)
	}
	drafts, err := e.personal.Drafts(ctx, alex)
	if err != nil || drafts == nil || len(drafts) != 0 {
		t.Errorf("Drafts = %v, %v; want an empty slice", drafts, err)
	}
	settings, err := e.personal.Settings(ctx, alex)
	if err != nil || settings == nil || len(settings) != 0 {
		t.Errorf("Settings = %v, %v; want an empty slice", settings, err)
	}
	sb, err := e.personal.Sidebar(ctx, alex)
	if want := (syncmod.Sidebar{PrincipalID: alex, Sections: []syncmod.SidebarSection{}}); err != nil || !reflect.DeepEqual(sb, want) {
		t.Errorf("Sidebar = %+v, %v; want %+v", sb, err, want)
	}
	samePersonalData(t, e, alex)

	for _, who := range []uuid.UUID{alex, sam} {
		ctx := as(t, who)
		if _, err := e.personal.UpdateReadState(ctx, thread, 2); err != nil {
			t.Fatal(err)
		}
		if _, err := e.personal.UpdateReadState(ctx, otherTh, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := e.personal.SaveDraft(ctx, channel, thread, "Reply"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.personal.SaveDraft(ctx, channel, uuid.Nil, "New"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.personal.PutSetting(ctx, "theme", json.RawMessage(`"dark"`)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.personal.PutSetting(ctx, "editor.font", json.RawMessage(`14`)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.personal.PutSidebar(ctx, []syncmod.SidebarSection{{Key: "fav", ChannelIDs: []uuid.UUID{channel}}}); err != nil {
			t.Fatal(err)
		}
	}

	states, err = e.personal.ReadStates(ctx, alex)
	if err != nil {
		t.Fatal(err)
	}
	wantStates := map[uuid.UUID]syncmod.ReadState{
		thread:  {PrincipalID: alex, ThreadID: thread, ChannelID: channel, LastReadSeq: 2, Version: 1},
		otherTh: {PrincipalID: alex, ThreadID: otherTh, ChannelID: other, LastReadSeq: 1, Version: 1},
	}
	if !reflect.DeepEqual(states, wantStates) {
		t.Errorf("ReadStates = %+v, want %+v", states, wantStates)
	}
	drafts, err = e.personal.Drafts(ctx, alex)
	if err != nil {
		t.Fatal(err)
	}
	if len(drafts) != 2 || drafts[0].ThreadID != uuid.Nil || drafts[1].ThreadID != thread || drafts[0].PrincipalID != alex {
		t.Errorf("Drafts = %+v, want Alex's channel draft, then his thread draft", drafts)
	}
	settings, err = e.personal.Settings(ctx, alex)
	if err != nil {
		t.Fatal(err)
	}
	if len(settings) != 2 || settings[0].Key != "editor.font" || settings[1].Key != "theme" || settings[0].PrincipalID != alex {
		t.Errorf("Settings = %+v, want Alex's editor.font and theme", settings)
	}
	sb, err = e.personal.Sidebar(ctx, alex)
	if err != nil {
		t.Fatal(err)
	}
	if sb.PrincipalID != alex || sb.Version != 1 || len(sb.Sections) != 1 || sb.Sections[0].Key != "fav" {
		t.Errorf("Sidebar = %+v, want Alex's sidebar, version 1", sb)
	}
	samePersonalData(t, e, alex)
}

// samePersonalData checks that PersonalData, the snapshot's one read, gives what the four
// readers give one by one: the read states in thread order, the sidebar as Sidebar gives it
// (the empty one when never stored), the settings and the drafts, each non-nil.
func samePersonalData(t *testing.T, e personalEnv, who uuid.UUID) {
	t.Helper()
	ctx := t.Context()
	got, err := e.personal.PersonalData(ctx, who)
	if err != nil {
		t.Fatal(err)
	}
	var want app.PersonalData
	if want.ReadStates, err = e.personal.ReadStateList(ctx, who); err != nil {
		t.Fatal(err)
	}
	if want.Sidebar, err = e.personal.Sidebar(ctx, who); err != nil {
		t.Fatal(err)
	}
	if want.Settings, err = e.personal.Settings(ctx, who); err != nil {
		t.Fatal(err)
	}
	if want.Drafts, err = e.personal.Drafts(ctx, who); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || got.ReadStates == nil || got.Settings == nil || got.Drafts == nil || got.Sidebar.Sections == nil {
		t.Errorf("PersonalData = %+v, want %+v (no nil list)", got, want)
	}
}

func TestPersonalReadersFail(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	e.world.failRead = errDB
	ctx := t.Context()
	_, errStates := e.personal.ReadStates(ctx, alex)
	_, errDrafts := e.personal.Drafts(ctx, alex)
	_, errSettings := e.personal.Settings(ctx, alex)
	_, errSidebar := e.personal.Sidebar(ctx, alex)
	_, errData := e.personal.PersonalData(ctx, alex)
	for name, err := range map[string]error{"ReadStates": errStates, "Drafts": errDrafts, "Settings": errSettings, "Sidebar": errSidebar, "PersonalData": errData} {
		if !errors.Is(err, errDB) {
			t.Errorf("%s: err = %v, want %v", name, err, errDB)
		}
	}
}

// TestGetDraft checks the read of one's own draft: draft.read on the channel first (the read
// action of drafts, not draft.write), then the draft of the channel or of its thread with its text; none, a thread of
// another channel, an unknown channel or a denial is not_found (forbidden stays forbidden);
// another principal never sees it; a failing store passes its error.
func TestGetDraft(t *testing.T) {
	t.Parallel()
	e := newPersonalEnv(t)
	ctx := as(t, alex)
	if _, err := e.personal.SaveDraft(ctx, channel, thread, "Sam, see above"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.personal.SaveDraft(ctx, channel, uuid.Nil, "New thread"); err != nil {
		t.Fatal(err)
	}
	e.world.committed = nil
	e.auth.Reset()

	d, err := e.personal.GetDraft(ctx, channel, thread)
	if err != nil {
		t.Fatalf("GetDraft: %v", err)
	}
	if d.PrincipalID != alex || d.ChannelID != channel || d.ThreadID != thread || d.ContentMD != "Sam, see above" || d.Version != 1 {
		t.Errorf("thread draft = %+v", d)
	}
	channelRes := authorize.Resource{Kind: kernel.ResourceChannel, ID: channel, SpaceID: space, ChannelID: channel}
	checkAuth(t, e.auth.Calls(), alex, authCall{action: kernel.ActionDraftRead, res: channelRes})
	if d, err := e.personal.GetDraft(ctx, channel, uuid.Nil); err != nil || d.ContentMD != "New thread" || d.ThreadID != uuid.Nil {
		t.Errorf("channel draft = %+v, %v", d, err)
	}
	checkEvents(t, e.world.committed, alex) // a read appends nothing

	for name, get := range map[string]func() error{
		"another's":                 func() error { _, err := e.personal.GetDraft(as(t, sam), channel, thread); return err },
		"none in the other channel": func() error { _, err := e.personal.GetDraft(ctx, other, uuid.Nil); return err },
		"a thread of another channel": func() error {
			_, err := e.personal.GetDraft(ctx, other, thread)
			return err
		},
		"an unknown channel": func() error { _, err := e.personal.GetDraft(ctx, nowhere, uuid.Nil); return err },
	} {
		if err := get(); !errors.Is(err, problem.ErrNotFound) {
			t.Errorf("%s: %v, want not_found", name, err)
		}
	}
	e.auth.Rule = denyActions(map[kernel.Action]error{kernel.ActionDraftRead: problem.ErrForbidden})
	if _, err := e.personal.GetDraft(ctx, channel, thread); !errors.Is(err, problem.ErrForbidden) {
		t.Errorf("draft.read denied: %v, want forbidden", err)
	}
	e.auth.Rule = denyActions(map[kernel.Action]error{kernel.ActionDraftWrite: problem.ErrForbidden})
	if _, err := e.personal.GetDraft(ctx, channel, thread); err != nil {
		t.Errorf("draft.write denied (a viewer who kept a draft as a member): %v, want the draft", err)
	}
	e.auth.Rule = nil
	e.world.failRead = errDB
	if _, err := e.personal.GetDraft(ctx, channel, thread); !errors.Is(err, errDB) {
		t.Errorf("failing store: %v", err)
	}
	if _, err := e.personal.GetDraft(t.Context(), channel, thread); !errors.Is(err, problem.ErrUnauthenticated) {
		t.Errorf("without an actor: %v", err)
	}
}
