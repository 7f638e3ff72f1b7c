package httpapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apitest"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/authorize/authorizetest"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/adapters/httpapi"
)

var epoch = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000e0")

// syncStack mounts a Server whose catch-up and snapshot are the given fakes.
func syncStack(t *testing.T, c *fakeCatchUp, snap *fakeSnapshot) (http.Handler, *authorizetest.Authorizer) {
	t.Helper()
	a := &authorizetest.Authorizer{RequireActor: true}
	s, err := httpapi.New(httpapi.Deps{Authorizer: a, Personal: &fakePersonal{}, CatchUp: c, Snapshot: snap})
	if err != nil {
		t.Fatal(err)
	}
	return stackOf(s), a
}

func TestListEventsPage(t *testing.T) {
	t.Parallel()
	env := json.RawMessage(`{"seq":41,"id":"01938d2a-7c00-7a01-8000-0000000000f1","type":"space.created","occurred_at":"2026-12-01T09:30:15Z","actor":{"id":"01938d2a-7c00-7a01-8000-0000000000a2","kind":"person","display_name":"Sam","handle":"sam"},"space_id":"01938d2a-7c00-7a01-8000-0000000000b1","resource":{"kind":"space","id":"01938d2a-7c00-7a01-8000-0000000000b1"},"payload":{"space_id":"01938d2a-7c00-7a01-8000-0000000000b1","name":"Support","version":1}}`)
	tests := []struct {
		name     string
		query    string
		events   []json.RawMessage
		wantIn   syncmod.CheckInput
		wantPage syncmod.PageInput
		wantBody string
	}{
		{
			name: "a page with an event", query: "after=40&epoch=" + epoch.String() + "&limit=7",
			events:   []json.RawMessage{env},
			wantIn:   syncmod.CheckInput{After: 40, Epoch: syncmod.EpochOf(epoch)},
			wantPage: syncmod.PageInput{After: 40, Head: 50, Limit: 7, PermissionVersion: 3, PermissionVersionRead: true},
			wantBody: `{"events":[` + string(env) + `],"next_cursor":45,"head_seq":50,"sync_epoch":"` + epoch.String() + `","oldest_seq":9}`,
		},
		{
			name: "an empty page still carries its cursor", query: "after=0",
			events:   []json.RawMessage{},
			wantIn:   syncmod.CheckInput{After: 0},
			wantPage: syncmod.PageInput{After: 0, Head: 50, PermissionVersion: 3, PermissionVersionRead: true},
			wantBody: `{"events":[],"next_cursor":45,"head_seq":50,"sync_epoch":"` + epoch.String() + `","oldest_seq":9}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := &fakeCatchUp{
				check: syncmod.CheckResult{HeadSeq: 50, MinRetainedSeq: 10, SyncEpoch: epoch, PermissionVersion: 3, PermissionVersionRead: true},
				page:  syncmod.PageResult{Events: tc.events, NextCursor: 45},
			}
			// The page is released once its envelopes are copied into the body: the body must
			// still hold them although Release overwrites their bytes.
			var releases atomic.Int32
			events := make([]json.RawMessage, len(tc.events))
			for i, e := range tc.events {
				events[i] = slices.Clone(e)
			}
			c.page.Events = events
			c.page.Release = func() {
				releases.Add(1)
				for _, e := range events {
					clear(e)
				}
			}
			h, a := syncStack(t, c, &fakeSnapshot{})
			rec, req := send(t, h, http.MethodGet, "/api/v1/events?"+tc.query, "")
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d; body %s", rec.Code, rec.Body)
			}
			if got := strings.TrimSpace(rec.Body.String()); got != tc.wantBody {
				t.Errorf("body =\n%s\nwant\n%s", got, tc.wantBody)
			}
			if cc := rec.Header().Get("Cache-Control"); cc != "private, no-store" {
				t.Errorf("Cache-Control = %q", cc)
			}
			if err := apitest.ValidateOperation(req.Context(), req, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
				t.Errorf("response does not match the API: %v", err)
			}
			if len(c.checks) != 1 || c.checks[0] != tc.wantIn || len(c.pages) != 1 || c.pages[0] != tc.wantPage {
				t.Errorf("checks %+v pages %+v; want %+v and %+v", c.checks, c.pages, tc.wantIn, tc.wantPage)
			}
			if d := a.Decisions(); len(d) != 1 || d[0].Action != kernel.ActionEventsCatchUp || d[0].Res != authorize.Instance() {
				t.Errorf("authorized %+v, want events.catch_up on the instance", d)
			}
			if n := releases.Load(); n != 1 {
				t.Errorf("the page was released %d times, want once", n)
			}
		})
	}
}

func TestListEventsProblems(t *testing.T) {
	t.Parallel()
	stale := syncmod.CheckResult{HeadSeq: 50, MinRetainedSeq: 30, SyncEpoch: epoch, Reason: syncmod.ResyncRetention,
		Recovery: syncmod.RecoverySnapshot, RetryAfter: 800 * time.Millisecond}
	tests := []struct {
		name       string
		query      string
		deny       error
		check      syncmod.CheckResult
		pageErr    error
		wantStatus int
		wantCode   string
		wantPages  int
	}{
		{name: "not allowed", query: "after=0", deny: problem.ErrForbidden, wantStatus: http.StatusForbidden, wantCode: "forbidden"},
		{name: "negative cursor", query: "after=-1", wantStatus: http.StatusBadRequest, wantCode: "validation_failed"},
		{name: "cursor behind retention", query: "after=3", check: stale, wantStatus: http.StatusGone, wantCode: "resync_required"},
		{
			name: "retention overtakes the page", query: "after=30",
			check:      syncmod.CheckResult{HeadSeq: 50, MinRetainedSeq: 30, SyncEpoch: epoch},
			pageErr:    &syncmod.ResyncError{Check: stale},
			wantStatus: http.StatusGone, wantCode: "resync_required", wantPages: 1,
		},
		{
			name: "page fails", query: "after=30", check: syncmod.CheckResult{HeadSeq: 50, SyncEpoch: epoch},
			pageErr: errors.New("database down"), wantStatus: http.StatusInternalServerError, wantCode: "internal", wantPages: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := &fakeCatchUp{check: tc.check, pageErr: tc.pageErr}
			h, a := syncStack(t, c, &fakeSnapshot{})
			a.Err = tc.deny
			rec, req := send(t, h, http.MethodGet, "/api/v1/events?"+tc.query, "")
			var body map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %s: %v", rec.Body, err)
			}
			if rec.Code != tc.wantStatus || body["code"] != tc.wantCode {
				t.Fatalf("status %d code %v, want %d %s; body %s", rec.Code, body["code"], tc.wantStatus, tc.wantCode, rec.Body)
			}
			if err := apitest.ValidateOperation(req.Context(), req, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
				t.Errorf("response does not match the API: %v", err)
			}
			if len(c.pages) != tc.wantPages {
				t.Errorf("%d pages read, want %d", len(c.pages), tc.wantPages)
			}
			if tc.wantStatus == http.StatusGone {
				if cc := rec.Header().Get("Cache-Control"); cc != "private, no-store" {
					t.Errorf("Cache-Control of the 410 = %q", cc)
				}
				if body["reason"] != "retention" || body["recovery"] != "snapshot" || body["retry_after_ms"] != 800.0 ||
					body["head_seq"] != 50.0 || body["oldest_seq"] != 29.0 || body["sync_epoch"] != epoch.String() {
					t.Errorf("410 body = %v", body)
				}
			}
		})
	}
}

func snapshotView() syncmod.SnapshotView {
	at := time.Date(2026, 12, 1, 9, 30, 15, 0, time.UTC)
	space := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000b1")
	dm := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000c9")
	return syncmod.SnapshotView{
		HeadSeq: 1300, SyncEpoch: epoch, PermissionVersion: 12,
		Principal: identity.PrincipalRef{ID: samID, Kind: actor.KindPerson, DisplayName: "Sam", Handle: "sam"},
		Instance:  instance.Info{ID: uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000e9"), Name: "bothy", SyncEpoch: epoch, Version: 1, CreatedAt: at},
		Spaces: []chat.SpaceView{{Space: chat.Space{ID: space, Name: "Support", Version: 2, CreatedAt: at},
			Level: "member", Capabilities: []kernel.Action{}}},
		Channels: []chat.ChannelView{
			{Channel: chat.Channel{ID: channelID, SpaceID: space, Kind: chat.ChannelStandard, Name: "tickets", Version: 1, CreatedAt: at},
				Level: "member", Capabilities: []kernel.Action{kernel.ActionThreadCreate}},
			{Channel: chat.Channel{ID: dm, Kind: chat.ChannelDM, ParticipantIDs: []uuid.UUID{samID}, Version: 1, CreatedAt: at},
				Level: "member", Capabilities: []kernel.Action{}},
		},
		Sidebar:       syncmod.Sidebar{Sections: []syncmod.SidebarSection{{Key: "favourites", Title: "Favourites", ChannelIDs: []uuid.UUID{channelID}}}, Version: 1},
		UnreadThreads: []syncmod.UnreadThread{{ThreadID: threadID, ChannelID: channelID, SpaceID: space, LastMessageSeq: 9, LastReadSeq: 4, UnreadCount: 5, MentionCount: 1}},
		ActiveRuns:    []syncmod.RunSummary{},
		Agents:        []syncmod.AgentPresence{{Agent: identity.PrincipalRef{ID: otherID, Kind: actor.KindAgent, DisplayName: "Robin", Handle: "robin"}, State: syncmod.AgentStateUnknown}},
		Settings:      []syncmod.Setting{{Key: "theme", Value: json.RawMessage(`"dark"`), Version: 2}},
		Drafts:        []syncmod.DraftRef{{ChannelID: channelID, Version: 3}},
		Features:      []instance.EvaluatedFlag{{Key: "threads.summaries", Enabled: true}},
		ETag:          `"abc"`,
	}
}

func TestGetSnapshot(t *testing.T) {
	t.Parallel()
	h, _ := syncStack(t, &fakeCatchUp{}, &fakeSnapshot{view: snapshotView()})
	rec, req := send(t, h, http.MethodGet, "/api/v1/sync/snapshot", "")
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d; body %s", rec.Code, rec.Body)
	}
	if err := apitest.ValidateOperation(req.Context(), req, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
		t.Errorf("response does not match the API: %v", err)
	}
	if rec.Header().Get("ETag") != `"abc"` || rec.Header().Get("Cache-Control") != "private, no-store" {
		t.Errorf("headers = %v", rec.Header())
	}
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	chans, _ := got["channels"].([]any)
	if len(chans) != 2 {
		t.Fatalf("channels = %v", got["channels"])
	}
	if dm, _ := chans[1].(map[string]any); dm["space_id"] != nil || dm["name"] != nil || dm["kind"] != "dm" {
		t.Errorf("the direct message = %v, want no space and no name", dm)
	}
	if std, _ := chans[0].(map[string]any); std["participant_ids"] == nil {
		t.Errorf("a standard channel's participant_ids = %v, want []", std["participant_ids"])
	}
	if strings.Contains(rec.Body.String(), "content_md") {
		t.Errorf("the snapshot carries content: %s", rec.Body)
	}

	// The same ETag answers 304, with the same headers and no body.
	req2 := req.Clone(t.Context())
	req2.Header.Set("If-None-Match", `"abc"`)
	rec2, _ := sendReq(h, req2)
	if rec2.Code != http.StatusNotModified || rec2.Body.Len() != 0 || rec2.Header().Get("ETag") != `"abc"` ||
		rec2.Header().Get("Cache-Control") != "private, no-store" {
		t.Errorf("If-None-Match with the current tag: %d %v %q", rec2.Code, rec2.Header(), rec2.Body)
	}
	// Another tag gets the snapshot.
	req3 := req.Clone(t.Context())
	req3.Header.Set("If-None-Match", `"old"`)
	if rec3, _ := sendReq(h, req3); rec3.Code != http.StatusOK {
		t.Errorf("If-None-Match with an old tag: %d", rec3.Code)
	}
}

// TestGetSnapshotSendsTheBuiltBody: the handler sends the body the snapshot encoded, as it is
// (no second encoding), with the newline json.Encoder writes and the built ETag.
func TestGetSnapshotSendsTheBuiltBody(t *testing.T) {
	t.Parallel()
	v := snapshotView()
	body, err := httpapi.EncodeSnapshot(v)
	if err != nil {
		t.Fatalf("EncodeSnapshot: %v", err)
	}
	// A marker the mapping would never write proves that the bytes are the view's Body.
	v.Body = append(body[:len(body)-1:len(body)-1], []byte(`,"marker":true}`)...)
	h, _ := syncStack(t, &fakeCatchUp{}, &fakeSnapshot{view: v})
	rec, _ := send(t, h, http.MethodGet, "/api/v1/sync/snapshot", "")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("ETag") != v.ETag {
		t.Fatalf("status %d, headers %v", rec.Code, rec.Header())
	}
	if want := append(slices.Clone(v.Body), '\n'); !bytes.Equal(rec.Body.Bytes(), want) {
		t.Fatalf("body\n got %s\nwant %s", rec.Body, want)
	}
}

func TestGetSnapshotProblem(t *testing.T) {
	t.Parallel()
	h, _ := syncStack(t, &fakeCatchUp{}, &fakeSnapshot{err: problem.ErrDevicePending})
	rec, req := send(t, h, http.MethodGet, "/api/v1/sync/snapshot", "")
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "device_pending") {
		t.Fatalf("status %d body %s", rec.Code, rec.Body)
	}
	if err := apitest.ValidateOperation(req.Context(), req, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
		t.Errorf("response does not match the API: %v", err)
	}
}
