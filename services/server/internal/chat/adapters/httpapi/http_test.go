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
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/adapters/httpapi"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize/authorizetest"
	"bothy.example.com/server/internal/kernel/logging"
	"bothy.example.com/server/internal/kernel/problem"
)

// testServer serves the chat operations through the generated strict server. The chat
// Server's methods are promoted from depth one and win over the nil interface's at depth
// two, which no test calls.
type testServer struct {
	*httpapi.Server
	others
}

type others struct{ apigen.StrictServerInterface }

// stack mounts a Server over fakes the way wire does: the strict handler on chi, with
// problem.Write as the error hook, and the actor Sam in every request's context.
func stack(t *testing.T) (http.Handler, *authorizetest.Authorizer, *fakeChat) {
	t.Helper()
	s, authz, ports := newServer(t)
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
	return r, authz, ports
}

// exchange is one request of the HTTP tests and the fake answers behind it.
type exchange struct {
	name   string
	method string
	path   string
	body   string
	setup  func(*fakeChat)
	status int
}

// fullWorld fills the fake with answers that exercise every optional member: nil lists from
// the module, a direct message without space, an edited and a redacted message.
func fullWorld(f *fakeChat) {
	f.space = chat.Space{ID: spaceID, Name: "Support", Version: 1, CreatedAt: created}
	f.spaceViews = []chat.SpaceView{
		{Space: chat.Space{ID: spaceID, Name: "Support", Description: "Questions from customers", Version: 2, CreatedAt: created}, Level: "member"},
		{Space: chat.Space{ID: uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000b2"), Name: "Team", Version: 1, CreatedAt: created}},
	}
	f.channel = chat.Channel{ID: channelID, SpaceID: spaceID, Kind: chat.ChannelStandard, Name: "tickets", Version: 1, CreatedAt: created}
	f.channelViews = []chat.ChannelView{
		{Channel: f.channel, Level: "admin", Capabilities: []kernel.Action{kernel.ActionChannelArchive, kernel.ActionThreadCreate}},
		{Channel: dm, Level: "member"},
	}
	f.thread = chat.Thread{ID: threadID, ChannelID: dmID, CreatedBy: alexID, CreatedAt: created, Version: 1, LastMessageSeq: 1}
	f.message = chat.Message{ID: messageID, ThreadID: threadID, ChannelID: dmID, Seq: 1, AuthorID: alexID, ContentMD: "hello", CreatedAt: created, EditedAt: later}
	f.messages = page(1, 4)
}

func TestHTTP(t *testing.T) {
	t.Parallel()
	base := "/api/v1"
	tests := []exchange{
		{name: "createSpace", method: http.MethodPost, path: base + "/spaces", body: `{"name":"Support"}`, status: 201},
		{name: "createSpace archived", method: http.MethodPost, path: base + "/spaces", body: `{"name":"Support"}`, status: 201,
			setup: func(f *fakeChat) { f.space.ArchivedAt = later }},
		{name: "listSpaces", method: http.MethodGet, path: base + "/spaces", status: 200},
		{name: "listSpaces none", method: http.MethodGet, path: base + "/spaces", status: 200, setup: func(f *fakeChat) { f.spaceViews = nil }},
		{name: "archiveSpace", method: http.MethodPost, path: base + "/spaces/" + spaceID.String() + "/archive", status: 200},
		{name: "createChannel", method: http.MethodPost, path: base + "/spaces/" + spaceID.String() + "/channels", body: `{"name":"tickets","topic":"One thread per ticket"}`, status: 201},
		{name: "listSpaceChannels", method: http.MethodGet, path: base + "/spaces/" + spaceID.String() + "/channels", status: 200},
		{name: "listSpaceChannels none", method: http.MethodGet, path: base + "/spaces/" + spaceID.String() + "/channels", status: 200,
			setup: func(f *fakeChat) { f.channelViews = nil }},
		{name: "archiveChannel", method: http.MethodPost, path: base + "/channels/" + channelID.String() + "/archive", status: 200},
		{name: "createDirectMessage new", method: http.MethodPost, path: base + "/dms", body: `{"participant_ids":["` + samID.String() + `"]}`, status: 201,
			setup: func(f *fakeChat) { f.channel, f.created = dm, true }},
		{name: "createDirectMessage existing", method: http.MethodPost, path: base + "/dms", body: `{"participant_ids":["` + samID.String() + `"]}`, status: 200,
			setup: func(f *fakeChat) { f.channel = dm }},
		{name: "createThread", method: http.MethodPost, path: base + "/channels/" + dmID.String() + "/threads", body: `{"content_md":"hello"}`, status: 201},
		{name: "postMessage", method: http.MethodPost, path: base + "/threads/" + threadID.String() + "/messages", body: `{"content_md":"hello"}`, status: 201},
		{name: "listMessages", method: http.MethodGet, path: base + "/threads/" + threadID.String() + "/messages?after=0&limit=4", status: 200},
		{name: "listMessages empty", method: http.MethodGet, path: base + "/threads/" + threadID.String() + "/messages", status: 200,
			setup: func(f *fakeChat) { f.messages = nil }},
		{name: "listMessages negative after", method: http.MethodGet, path: base + "/threads/" + threadID.String() + "/messages?after=-1", status: 400},
		{name: "editMessage", method: http.MethodPatch, path: base + "/messages/" + messageID.String(), body: `{"content_md":"hello again"}`, status: 200},
		{name: "deleteMessage", method: http.MethodDelete, path: base + "/messages/" + messageID.String(), status: 204},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, _, ports := stack(t)
			fullWorld(ports)
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
		})
	}
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

// TestHTTPProblems checks that the problems of the use cases reach the client as the edge
// writer renders them, with the statuses the API documents for each operation.
func TestHTTPProblems(t *testing.T) {
	t.Parallel()
	base := "/api/v1"
	type request struct{ method, path, body string }
	reqs := map[string]request{
		"archiveSpace":      {http.MethodPost, base + "/spaces/" + spaceID.String() + "/archive", ""},
		"createChannel":     {http.MethodPost, base + "/spaces/" + spaceID.String() + "/channels", `{"name":"tickets"}`},
		"listSpaceChannels": {http.MethodGet, base + "/spaces/" + spaceID.String() + "/channels", ""},
		"archiveChannel":    {http.MethodPost, base + "/channels/" + channelID.String() + "/archive", ""},
		"createThread":      {http.MethodPost, base + "/channels/" + channelID.String() + "/threads", `{"content_md":"hello"}`},
		"postMessage":       {http.MethodPost, base + "/threads/" + threadID.String() + "/messages", `{"content_md":"hello"}`},
		"listMessages":      {http.MethodGet, base + "/threads/" + threadID.String() + "/messages", ""},
		"editMessage":       {http.MethodPatch, base + "/messages/" + messageID.String(), `{"content_md":"hello"}`},
		"deleteMessage":     {http.MethodDelete, base + "/messages/" + messageID.String(), ""},
	}
	tests := []struct {
		err    error
		status int
		code   string
		ops    []string
	}{
		{problem.ErrNotFound, 404, "not_found", []string{"archiveSpace", "createChannel", "listSpaceChannels", "archiveChannel", "createThread", "postMessage", "listMessages", "editMessage", "deleteMessage"}},
		{problem.ErrForbidden, 403, "forbidden", []string{"archiveSpace", "createChannel", "archiveChannel", "createThread", "postMessage", "editMessage", "deleteMessage"}},
		{problem.ErrConflict, 409, "conflict", []string{"createChannel", "createThread", "postMessage", "editMessage"}},
		{problem.Validation(problem.FieldError{Field: "content_md", Message: "is required"}), 400, "validation_failed", []string{"createThread", "postMessage", "editMessage"}},
		{errors.New("database on fire"), 500, "internal", []string{"archiveSpace", "listMessages", "deleteMessage"}},
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

// TestHTTPRefusedBeforeTheBody checks that an actor without space.create, space.read or
// channel.create on the instance gets the authorizer's answer from the handler, whatever
// the body.
func TestHTTPRefusedBeforeTheBody(t *testing.T) {
	t.Parallel()
	for _, r := range []struct{ method, path, body string }{
		{http.MethodPost, "/api/v1/spaces", `{"name":"Support"}`},
		{http.MethodGet, "/api/v1/spaces", ""},
		{http.MethodPost, "/api/v1/dms", `{"participant_ids":[]}`},
	} {
		h, authz, ports := stack(t)
		authz.Err = problem.ErrForbidden
		rec, req := send(t, h, r.method, r.path, r.body)
		if rec.Code != 403 || len(ports.called()) != 0 {
			t.Errorf("%s %s: %d %s, port calls %v", r.method, r.path, rec.Code, rec.Body.String(), ports.called())
		}
		if err := apitest.ValidateOperation(req.Context(), req, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
			t.Errorf("%s %s: response does not match the API: %v", r.method, r.path, err)
		}
	}
}
