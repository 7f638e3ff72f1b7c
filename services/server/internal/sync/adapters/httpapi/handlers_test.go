package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/authorize/authorizetest"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/adapters/httpapi"
)

var (
	samID     = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000a2")
	channelID = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000c1")
	otherID   = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000c2")
	threadID  = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000d1")
	saved     = time.Date(2026, 12, 1, 9, 30, 15, 0, time.UTC)
)

func newServer(t *testing.T) (*httpapi.Server, *authorizetest.Authorizer, *fakePersonal) {
	t.Helper()
	a, p := &authorizetest.Authorizer{RequireActor: true}, &fakePersonal{}
	s, err := httpapi.New(httpapi.Deps{Authorizer: a, Personal: p, CatchUp: &fakeCatchUp{}, Snapshot: &fakeSnapshot{}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s, a, p
}

func as(id uuid.UUID) context.Context {
	return actor.With(context.Background(), actor.Actor{PrincipalID: id, Kind: actor.KindPerson})
}

func ptr[T any](v T) *T { return &v }

func TestNewRefusesMissingDeps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		deps httpapi.Deps
		want []string
	}{
		{"authorizer", httpapi.Deps{Personal: &fakePersonal{}, CatchUp: &fakeCatchUp{}, Snapshot: &fakeSnapshot{}}, []string{"authorizer is nil"}},
		{"personal", httpapi.Deps{Authorizer: &authorizetest.Authorizer{RequireActor: true}, CatchUp: &fakeCatchUp{}, Snapshot: &fakeSnapshot{}}, []string{"personal port is nil"}},
		{"catch-up", httpapi.Deps{Authorizer: &authorizetest.Authorizer{RequireActor: true}, Personal: &fakePersonal{}, Snapshot: &fakeSnapshot{}}, []string{"catch-up port is nil"}},
		{"snapshot", httpapi.Deps{Authorizer: &authorizetest.Authorizer{RequireActor: true}, Personal: &fakePersonal{}, CatchUp: &fakeCatchUp{}}, []string{"snapshot port is nil"}},
		{"all", httpapi.Deps{}, []string{"authorizer is nil", "personal port is nil", "catch-up port is nil", "snapshot port is nil"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := httpapi.New(tc.deps)
			if err == nil || s != nil {
				t.Fatalf("New = %v, %v; want an error", s, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to say %q", err, w)
				}
			}
		})
	}
}

// operation is one personal-data handler called with a valid request and, for operations
// with a body, without it.
type operation struct {
	name string
	// self reports whether the handler authorizes setting.write on the actor itself: the
	// resource of putSetting and putSidebar is the actor, known before any read. The other
	// operations act on a thread or channel whose ancestors only the use case loads.
	self   bool
	port   string
	call   func(ctx context.Context, s *httpapi.Server) (any, error)
	noBody func(ctx context.Context, s *httpapi.Server) (any, error)
}

func operations() []operation {
	return []operation{
		{
			name: "updateReadState", port: "UpdateReadState",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.UpdateReadState(ctx, apigen.UpdateReadStateRequestObject{ThreadId: threadID, Body: &apigen.UpdateReadStateRequest{LastReadSeq: 2}})
			},
			noBody: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.UpdateReadState(ctx, apigen.UpdateReadStateRequestObject{ThreadId: threadID})
			},
		},
		{
			name: "saveDraft", port: "SaveDraft",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.SaveDraft(ctx, apigen.SaveDraftRequestObject{ChannelId: channelID, Body: &apigen.SaveDraftRequest{ContentMd: "Half a reply"}})
			},
			noBody: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.SaveDraft(ctx, apigen.SaveDraftRequestObject{ChannelId: channelID})
			},
		},
		{
			name: "deleteDraft", port: "DeleteDraft",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.DeleteDraft(ctx, apigen.DeleteDraftRequestObject{ChannelId: channelID})
			},
		},
		{
			name: "putSetting", self: true, port: "PutSetting",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.PutSetting(ctx, apigen.PutSettingRequestObject{Key: "theme", Body: &apigen.PutSettingRequest{Value: json.RawMessage(`"dark"`)}})
			},
			noBody: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.PutSetting(ctx, apigen.PutSettingRequestObject{Key: "theme"})
			},
		},
		{
			name: "putSidebar", self: true, port: "PutSidebar",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.PutSidebar(ctx, apigen.PutSidebarRequestObject{Body: &apigen.PutSidebarRequest{Sections: []apigen.SidebarSection{}}})
			},
			noBody: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.PutSidebar(ctx, apigen.PutSidebarRequestObject{})
			},
		},
	}
}

// TestHandlersAuthorizeWhereTheResourceIsKnown checks that putSetting and putSidebar ask
// for setting.write on the actor itself before anything, a refusal reaching no port, and
// that the other operations leave the decision to their use case.
func TestHandlersAuthorizeWhereTheResourceIsKnown(t *testing.T) {
	t.Parallel()
	denials := []error{problem.ErrNotFound, problem.ErrForbidden, problem.ErrDevicePending, problem.ErrUnauthenticated}
	self := authorizetest.Decision{Action: kernel.ActionSettingWrite, Res: authorize.Resource{Kind: kernel.ResourcePrincipal, ID: samID}}
	for _, op := range operations() {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			if !op.self {
				s, authz, ports := newServer(t)
				authz.Err = problem.ErrForbidden
				if _, err := op.call(as(samID), s); err != nil {
					t.Fatalf("call: %v", err)
				}
				if got := authz.Decisions(); len(got) != 0 {
					t.Errorf("the handler decided %+v; its use case authorizes", got)
				}
				if calls := ports.called(); !slices.Equal(calls, []string{op.port}) {
					t.Errorf("port calls = %v, want [%s]", calls, op.port)
				}
				return
			}
			for _, deny := range denials {
				s, authz, ports := newServer(t)
				authz.Err = deny
				resp, err := op.call(as(samID), s)
				if !errors.Is(err, deny) || resp != nil {
					t.Errorf("denied with %v: resp %v, err %v", deny, resp, err)
				}
				if calls := ports.called(); len(calls) != 0 {
					t.Errorf("denied with %v: the handler called %v", deny, calls)
				}
				if got := authz.Decisions(); !slices.Equal(got, []authorizetest.Decision{self}) {
					t.Errorf("decisions = %+v, want exactly %+v", got, self)
				}
			}
			s, authz, ports := newServer(t)
			if _, err := op.call(context.Background(), s); !errors.Is(err, problem.ErrUnauthenticated) {
				t.Errorf("without an actor: err = %v, want unauthenticated", err)
			}
			if len(ports.called()) != 0 {
				t.Errorf("without an actor: the handler called %v", ports.called())
			}
			if got := authz.Decisions(); len(got) != 1 || got[0].Res.ID != uuid.Nil {
				t.Errorf("without an actor: decisions = %+v, want one on the principal without id", got)
			}

			s, authz, ports = newServer(t)
			if _, err := op.call(as(samID), s); err != nil {
				t.Fatalf("allowed: %v", err)
			}
			if calls := ports.called(); !slices.Equal(calls, []string{op.port}) {
				t.Errorf("allowed: port calls = %v, want [%s]", calls, op.port)
			}
			if got := authz.Decisions(); !slices.Equal(got, []authorizetest.Decision{self}) {
				t.Errorf("allowed: decisions = %+v, want exactly %+v", got, self)
			}
		})
	}
}

// TestPortErrorsPassThrough checks that the errors of the port reach the edge unchanged and
// without a response.
func TestPortErrorsPassThrough(t *testing.T) {
	t.Parallel()
	errs := []error{
		problem.Validation(problem.FieldError{Field: "key", Message: "is not a setting key"}),
		problem.ErrNotFound, problem.ErrForbidden, problem.ErrConflict, problem.ErrUnauthenticated,
		errors.New("database on fire"),
	}
	for _, op := range operations() {
		for _, want := range errs {
			s, _, ports := newServer(t)
			ports.err = want
			resp, err := op.call(as(samID), s)
			if !errors.Is(err, want) || err.Error() != want.Error() || resp != nil {
				t.Errorf("%s with port error %v: resp %v, err %v", op.name, want, resp, err)
			}
		}
	}
}

// checkValidation checks that err is validation_failed naming exactly field.
func checkValidation(t *testing.T, err error, field string) {
	t.Helper()
	p := problem.From(context.Background(), err)
	if p.Code != "validation_failed" || len(p.Errors) != 1 || p.Errors[0].Field != field {
		t.Errorf("err = %v, want validation_failed naming %s", err, field)
	}
}

func TestMissingBody(t *testing.T) {
	t.Parallel()
	for _, op := range operations() {
		if op.noBody == nil {
			continue
		}
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			s, _, ports := newServer(t)
			resp, err := op.noBody(as(samID), s)
			if resp != nil {
				t.Errorf("resp = %v", resp)
			}
			checkValidation(t, err, "body")
			if calls := ports.called(); len(calls) != 0 {
				t.Errorf("the handler called %v", calls)
			}
			if !op.self {
				return
			}
			s, authz, _ := newServer(t)
			authz.Err = problem.ErrDevicePending
			if _, err := op.noBody(as(samID), s); !errors.Is(err, problem.ErrDevicePending) {
				t.Errorf("denied without a body: err = %v, want the denial first", err)
			}
		})
	}
}

// written encodes resp as the strict server would (through its Visit method) and returns
// the status and the body, failing on null.
func written(t *testing.T, resp any) (int, string) {
	t.Helper()
	v := reflect.ValueOf(resp)
	for i := range v.NumMethod() {
		name := v.Type().Method(i).Name
		if !strings.HasPrefix(name, "Visit") {
			continue
		}
		rec := httptest.NewRecorder()
		out := v.Method(i).Call([]reflect.Value{reflect.ValueOf(rec)})
		if err, _ := out[0].Interface().(error); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.Contains(rec.Body.String(), "null") {
			t.Errorf("the body has null: %s", rec.Body.String())
		}
		return rec.Code, rec.Body.String()
	}
	t.Fatalf("%T has no Visit method", resp)
	return 0, ""
}

// checkResponse checks the status and the JSON body resp is written with (none when want
// is empty).
func checkResponse(t *testing.T, resp any, wantStatus int, want string) {
	t.Helper()
	status, body := written(t, resp)
	if status != wantStatus {
		t.Errorf("status = %d, want %d", status, wantStatus)
	}
	if want == "" {
		if body != "" {
			t.Errorf("body = %s, want none", body)
		}
		return
	}
	var g, w any
	if err := json.Unmarshal([]byte(body), &g); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("decode want %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("body = %s\nwant   %s", body, want)
	}
}

func TestUpdateReadState(t *testing.T) {
	t.Parallel()
	for _, seq := range []int64{0, 2, 1 << 40, -1} {
		s, _, ports := newServer(t)
		// The use case clamps and refuses; the handler passes the number as sent.
		ports.readState = syncmod.ReadState{PrincipalID: samID, ThreadID: threadID, ChannelID: channelID, LastReadSeq: 2, Version: 3}
		resp, err := s.UpdateReadState(as(samID), apigen.UpdateReadStateRequestObject{ThreadId: threadID, Body: &apigen.UpdateReadStateRequest{LastReadSeq: seq}})
		if err != nil {
			t.Fatalf("UpdateReadState: %v", err)
		}
		if ports.threadID != threadID || ports.lastReadSeq != seq {
			t.Errorf("UpdateReadState(%s, %d), want (%s, %d)", ports.threadID, ports.lastReadSeq, threadID, seq)
		}
		checkResponse(t, resp, 200, `{"thread_id":"`+threadID.String()+`","channel_id":"`+channelID.String()+`","last_read_seq":2,"version":3}`)
	}
}

func TestSaveDraft(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		body       apigen.SaveDraftRequest
		wantThread uuid.UUID
		want       string
	}{
		{
			name: "channel draft", body: apigen.SaveDraftRequest{ContentMd: "Half a reply"}, wantThread: uuid.Nil,
			want: `{"channel_id":"` + channelID.String() + `","content_md":"Half a reply","version":1}`,
		},
		{
			name: "thread draft", body: apigen.SaveDraftRequest{ContentMd: "Half a reply", ThreadId: ptr(threadID)}, wantThread: threadID,
			want: `{"channel_id":"` + channelID.String() + `","thread_id":"` + threadID.String() + `","content_md":"Half a reply","version":1}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _, ports := newServer(t)
			ports.draft = syncmod.Draft{PrincipalID: samID, ChannelID: channelID, ThreadID: tc.wantThread, ContentMD: "Half a reply", Version: 1, UpdatedAt: saved}
			resp, err := s.SaveDraft(as(samID), apigen.SaveDraftRequestObject{ChannelId: channelID, Body: &tc.body})
			if err != nil {
				t.Fatalf("SaveDraft: %v", err)
			}
			if ports.channelID != channelID || ports.threadID != tc.wantThread || ports.contentMD != "Half a reply" {
				t.Errorf("SaveDraft(%s, %s, %q)", ports.channelID, ports.threadID, ports.contentMD)
			}
			checkResponse(t, resp, 200, tc.want)
		})
	}
}

func TestDeleteDraft(t *testing.T) {
	t.Parallel()
	for _, thread := range []*uuid.UUID{nil, ptr(threadID)} {
		s, _, ports := newServer(t)
		resp, err := s.DeleteDraft(as(samID), apigen.DeleteDraftRequestObject{ChannelId: channelID, Params: apigen.DeleteDraftParams{ThreadId: thread}})
		if err != nil {
			t.Fatalf("DeleteDraft: %v", err)
		}
		want := uuid.Nil
		if thread != nil {
			want = *thread
		}
		if ports.channelID != channelID || ports.threadID != want {
			t.Errorf("DeleteDraft(%s, %s), want (%s, %s)", ports.channelID, ports.threadID, channelID, want)
		}
		checkResponse(t, resp, 204, "")
	}
}

func TestPutSetting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		value  json.RawMessage
		stored string
	}{
		{name: "string", value: json.RawMessage(`"dark"`), stored: `"dark"`},
		{name: "object", value: json.RawMessage(`{ "size": 14, "font": "mono" }`), stored: `{"font":"mono","size":14}`},
		{name: "false", value: json.RawMessage(`false`), stored: `false`},
		// null reaches the use case, which refuses it naming value.
		{name: "null", value: json.RawMessage(`null`), stored: `"unused"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _, ports := newServer(t)
			ports.setting = syncmod.Setting{PrincipalID: samID, Key: "editor.theme", Value: json.RawMessage(tc.stored), Version: 4}
			resp, err := s.PutSetting(as(samID), apigen.PutSettingRequestObject{Key: "editor.theme", Body: &apigen.PutSettingRequest{Value: tc.value}})
			if err != nil {
				t.Fatalf("PutSetting: %v", err)
			}
			if ports.key != "editor.theme" || string(ports.value) != string(tc.value) {
				t.Errorf("PutSetting(%q, %s), want (editor.theme, %s)", ports.key, ports.value, tc.value)
			}
			checkResponse(t, resp, 200, `{"key":"editor.theme","value":`+tc.stored+`,"version":4}`)
		})
	}
	for _, value := range []json.RawMessage{nil, {}} {
		s, _, ports := newServer(t)
		resp, err := s.PutSetting(as(samID), apigen.PutSettingRequestObject{Key: "theme", Body: &apigen.PutSettingRequest{Value: value}})
		if resp != nil {
			t.Errorf("absent value: resp = %v", resp)
		}
		checkValidation(t, err, "value")
		if len(ports.called()) != 0 {
			t.Errorf("absent value: the handler called %v", ports.called())
		}
	}
}

func TestPutSidebar(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		body     []apigen.SidebarSection
		wantIn   []syncmod.SidebarSection
		stored   syncmod.Sidebar
		wantJSON string
	}{
		{
			name:     "empty",
			body:     []apigen.SidebarSection{},
			wantIn:   []syncmod.SidebarSection{},
			stored:   syncmod.Sidebar{PrincipalID: samID, Version: 2},
			wantJSON: `{"sections":[],"version":2}`,
		},
		{
			name: "sections",
			body: []apigen.SidebarSection{
				{Key: "favourites", Title: "Favourites", ChannelIds: []uuid.UUID{otherID, channelID, otherID}},
				{Key: "later", Title: "", Collapsed: true},
			},
			wantIn: []syncmod.SidebarSection{
				{Key: "favourites", Title: "Favourites", ChannelIDs: []uuid.UUID{otherID, channelID, otherID}},
				{Key: "later", Title: "", Collapsed: true, ChannelIDs: []uuid.UUID{}},
			},
			stored: syncmod.Sidebar{PrincipalID: samID, Version: 1, Sections: []syncmod.SidebarSection{
				{Key: "favourites", Title: "Favourites", ChannelIDs: []uuid.UUID{otherID, channelID}},
				{Key: "later", Collapsed: true},
			}},
			wantJSON: `{"sections":[{"key":"favourites","title":"Favourites","collapsed":false,"channel_ids":["` + otherID.String() + `","` + channelID.String() + `"]},` +
				`{"key":"later","title":"","collapsed":true,"channel_ids":[]}],"version":1}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _, ports := newServer(t)
			ports.sidebar = tc.stored
			resp, err := s.PutSidebar(as(samID), apigen.PutSidebarRequestObject{Body: &apigen.PutSidebarRequest{Sections: tc.body}})
			if err != nil {
				t.Fatalf("PutSidebar: %v", err)
			}
			if !reflect.DeepEqual(ports.sections, tc.wantIn) {
				t.Errorf("PutSidebar(%+v), want %+v", ports.sections, tc.wantIn)
			}
			checkResponse(t, resp, 200, tc.wantJSON)
		})
	}

	s, _, ports := newServer(t)
	resp, err := s.PutSidebar(as(samID), apigen.PutSidebarRequestObject{Body: &apigen.PutSidebarRequest{}})
	if resp != nil {
		t.Errorf("absent sections: resp = %v", resp)
	}
	checkValidation(t, err, "sections")
	if len(ports.called()) != 0 {
		t.Errorf("absent sections: the handler called %v", ports.called())
	}
}
