package httpapi_test

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/apitest"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize/authorizetest"
	"bothy.example.com/server/internal/kernel/logging"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/adapters/httpapi"
)

// testServer serves the personal-data operations through the generated strict server. The
// Server's methods are promoted from depth one and win over the nil interface's at depth
// two, which no test calls.
type testServer struct {
	*httpapi.Server
	others
}

type others struct{ apigen.StrictServerInterface }

// stack mounts a Server over fakes the way wire does: the strict handler on chi, with
// problem.Write as the error hook, and the actor Sam in every request's context.
func stack(t *testing.T) (http.Handler, *authorizetest.Authorizer, *fakePersonal) {
	t.Helper()
	s, authz, ports := newServer(t)
	return stackOf(s), authz, ports
}

// stackOf mounts s like stack does.
func stackOf(s *httpapi.Server) http.Handler {
	logger := logging.New(io.Discard, slog.LevelError)
	r := chi.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			ctx := logging.With(req.Context(), logger)
			ctx = actor.With(ctx, actor.Actor{PrincipalID: samID, Kind: actor.KindPerson})
			next.ServeHTTP(w, req.WithContext(ctx))
		})
	})
	strict := apigen.NewStrictHandlerWithOptions(testServer{Server: s}, nil, apigen.StrictHTTPServerOptions{
		RequestErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, _ error) {
			problem.Write(w, r, problem.Validation(problem.FieldError{Field: "body", Message: "is not valid JSON"}))
		},
		ResponseErrorHandlerFunc: problem.Write,
	})
	apigen.HandlerWithOptions(strict, apigen.ChiServerOptions{BaseRouter: r})
	return r
}

func send(t *testing.T, h http.Handler, method, path, body string) (*httptest.ResponseRecorder, *http.Request) {
	t.Helper()
	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	req := httptest.NewRequestWithContext(t.Context(), method, path, reader)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec, req
}

// world fills the fake with answers: a thread draft, a setting, a sidebar with a section
// whose channel list the module hands over as nil.
func world(f *fakePersonal) {
	f.readState = syncmod.ReadState{PrincipalID: samID, ThreadID: threadID, ChannelID: channelID, LastReadSeq: 2, Version: 3}
	f.draft = syncmod.Draft{PrincipalID: samID, ChannelID: channelID, ThreadID: threadID, ContentMD: "Half a reply", Version: 1, UpdatedAt: saved}
	f.setting = syncmod.Setting{PrincipalID: samID, Key: "theme", Value: []byte(`{"mode":"dark"}`), Version: 1}
	f.sidebar = syncmod.Sidebar{PrincipalID: samID, Version: 5, Sections: []syncmod.SidebarSection{
		{Key: "favourites", Title: "Favourites", ChannelIDs: []uuid.UUID{channelID}},
		{Key: "empty"},
	}}
}

func TestHTTP(t *testing.T) {
	t.Parallel()
	draftPath := "/api/v1/channels/" + channelID.String() + "/draft"
	tests := []struct {
		name, method, path, body string
		setup                    func(*fakePersonal)
		status                   int
		check                    func(t *testing.T, f *fakePersonal)
	}{
		{name: "updateReadState", method: http.MethodPut, path: "/api/v1/threads/" + threadID.String() + "/read-state", body: `{"last_read_seq":9}`, status: 200,
			check: func(t *testing.T, f *fakePersonal) {
				if f.lastReadSeq != 9 || f.threadID != threadID {
					t.Errorf("UpdateReadState(%s, %d)", f.threadID, f.lastReadSeq)
				}
			}},
		{name: "saveDraft", method: http.MethodPut, path: draftPath, body: `{"content_md":"Half a reply","thread_id":"` + threadID.String() + `"}`, status: 200},
		{name: "saveDraft of the channel", method: http.MethodPut, path: draftPath, body: `{"content_md":"Half a reply"}`, status: 200,
			setup: func(f *fakePersonal) { f.draft.ThreadID = uuid.Nil }},
		{name: "deleteDraft", method: http.MethodDelete, path: draftPath + "?thread_id=" + threadID.String(), status: 204,
			check: func(t *testing.T, f *fakePersonal) {
				if f.threadID != threadID {
					t.Errorf("DeleteDraft thread = %s", f.threadID)
				}
			}},
		{name: "deleteDraft of the channel", method: http.MethodDelete, path: draftPath, status: 204},
		{name: "putSetting", method: http.MethodPut, path: "/api/v1/me/settings/theme", body: `{"value":{"mode":"dark"}}`, status: 200,
			check: func(t *testing.T, f *fakePersonal) {
				if f.key != "theme" || string(f.value) != `{"mode":"dark"}` {
					t.Errorf("PutSetting(%q, %s)", f.key, f.value)
				}
			}},
		{name: "putSetting without value", method: http.MethodPut, path: "/api/v1/me/settings/theme", body: `{}`, status: 400,
			check: func(t *testing.T, f *fakePersonal) {
				if len(f.called()) != 0 {
					t.Errorf("the handler called %v", f.called())
				}
			}},
		{name: "putSetting null reaches the use case", method: http.MethodPut, path: "/api/v1/me/settings/theme", body: `{"value":null}`, status: 400,
			setup: func(f *fakePersonal) {
				f.err = problem.Validation(problem.FieldError{Field: "value", Message: "must be a value"})
			},
			check: func(t *testing.T, f *fakePersonal) {
				if string(f.value) != "null" {
					t.Errorf("PutSetting value = %q, want null as sent", f.value)
				}
			}},
		{name: "putSidebar", method: http.MethodPut, path: "/api/v1/me/sidebar", body: `{"sections":[{"key":"favourites","title":"Favourites","collapsed":false,"channel_ids":["` + channelID.String() + `"]}]}`, status: 200},
		{name: "putSidebar empty", method: http.MethodPut, path: "/api/v1/me/sidebar", body: `{"sections":[]}`, status: 200,
			setup: func(f *fakePersonal) { f.sidebar.Sections = nil }},
		{name: "putSidebar without sections", method: http.MethodPut, path: "/api/v1/me/sidebar", body: `{}`, status: 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, _, ports := stack(t)
			world(ports)
			if tc.setup != nil {
				tc.setup(ports)
			}
			rec, req := send(t, h, tc.method, tc.path, tc.body)
			if rec.Code != tc.status {
				t.Errorf("status = %d, want %d: %s", rec.Code, tc.status, rec.Body.String())
			}
			if err := apitest.ValidateOperation(req.Context(), req, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
				t.Errorf("response does not match the API: %v", err)
			}
			if tc.check != nil {
				tc.check(t, ports)
			}
		})
	}
}

// TestHTTPProblems checks that the problems of the use cases reach the client as the edge
// writer renders them, with the statuses the API documents.
func TestHTTPProblems(t *testing.T) {
	t.Parallel()
	draftPath := "/api/v1/channels/" + channelID.String() + "/draft"
	type request struct{ method, path, body string }
	reqs := map[string]request{
		"updateReadState": {http.MethodPut, "/api/v1/threads/" + threadID.String() + "/read-state", `{"last_read_seq":-1}`},
		"saveDraft":       {http.MethodPut, draftPath, `{"content_md":""}`},
		"deleteDraft":     {http.MethodDelete, draftPath, ""},
		"putSetting":      {http.MethodPut, "/api/v1/me/settings/Theme", `{"value":1}`},
		"putSidebar":      {http.MethodPut, "/api/v1/me/sidebar", `{"sections":[]}`},
	}
	all := []string{"updateReadState", "saveDraft", "deleteDraft", "putSetting", "putSidebar"}
	tests := []struct {
		err    error
		status int
		code   string
		ops    []string
	}{
		{problem.Validation(problem.FieldError{Field: "key", Message: "is not a setting key"}), 400, "validation_failed", all},
		{problem.ErrNotFound, 404, "not_found", []string{"updateReadState", "saveDraft", "deleteDraft"}},
		{problem.ErrForbidden, 403, "forbidden", all},
		{problem.ErrUnauthenticated, 401, "unauthenticated", all},
		{errors.New("database on fire"), 500, "internal", all},
	}
	for _, tc := range tests {
		for _, op := range tc.ops {
			t.Run(tc.code+" "+op, func(t *testing.T) {
				t.Parallel()
				h, _, ports := stack(t)
				ports.err = tc.err
				r := reqs[op]
				rec, req := send(t, h, r.method, r.path, r.body)
				if rec.Code != tc.status || !strings.Contains(rec.Body.String(), `"code":"`+tc.code+`"`) {
					t.Errorf("got %d %s, want %d %s", rec.Code, rec.Body.String(), tc.status, tc.code)
				}
				if strings.Contains(rec.Body.String(), "on fire") {
					t.Errorf("the body leaks the internal error: %s", rec.Body.String())
				}
				if err := apitest.ValidateOperation(req.Context(), req, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
					t.Errorf("response does not match the API: %v", err)
				}
			})
		}
	}
}

// sendReq serves a prepared request.
func sendReq(h http.Handler, req *http.Request) (*httptest.ResponseRecorder, *http.Request) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec, req
}
