package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/apitest"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/adapters/httpapi"
	identitypg "bothy.example.com/server/internal/identity/adapters/postgres"
	"bothy.example.com/server/internal/identity/app"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/httpmw"
	"bothy.example.com/server/internal/kernel/logging"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/pgtest"
)

// testServer serves the identity operations through the strict server; every other operation
// of the interface is left nil (no test calls one).
type testServer struct {
	apigen.StrictServerInterface
	id *httpapi.Server
}

func (s testServer) GetMe(ctx context.Context, r apigen.GetMeRequestObject) (apigen.GetMeResponseObject, error) {
	return s.id.GetMe(ctx, r)
}

func (s testServer) CreatePerson(ctx context.Context, r apigen.CreatePersonRequestObject) (apigen.CreatePersonResponseObject, error) {
	return s.id.CreatePerson(ctx, r)
}

func (s testServer) CreateApp(ctx context.Context, r apigen.CreateAppRequestObject) (apigen.CreateAppResponseObject, error) {
	return s.id.CreateApp(ctx, r)
}

func (s testServer) CreateToken(ctx context.Context, r apigen.CreateTokenRequestObject) (apigen.CreateTokenResponseObject, error) {
	return s.id.CreateToken(ctx, r)
}

func (s testServer) ApproveDevice(ctx context.Context, r apigen.ApproveDeviceRequestObject) (apigen.ApproveDeviceResponseObject, error) {
	return s.id.ApproveDevice(ctx, r)
}

// cycle is a full HTTP stack over a fresh database: the kernel's middleware as wire chains it,
// the authentication middleware on every operation, the identity handlers and use cases, a
// fake authorizer, and a debug-level JSON log in a buffer.
type cycle struct {
	t       *testing.T
	handler http.Handler
	svc     *app.Service
	authz   *fakeAuthorizer
	clock   *clock.Fake
	mu      sync.Mutex
	logs    bytes.Buffer
}

// Write collects the log lines; the logger of several requests may write at once.
func (c *cycle) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.logs.Write(p)
}

func (c *cycle) logText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.logs.String()
}

const tokenTTL = 24 * time.Hour

func newCycle(t *testing.T) *cycle {
	t.Helper()
	c := &cycle{t: t, authz: newFakeAuthorizer(), clock: clock.NewFake(created)}
	logger := logging.New(c, slog.LevelDebug)
	runner := tx.NewRunner(pgtest.New(t))
	svc, err := app.New(app.Deps{
		Store: identitypg.New(runner), Tx: runner, Clock: c.clock, Logger: logger,
		Config:   app.Config{TokenTTL: tokenTTL, LastUsedFlushInterval: time.Minute, LastUsedFinalFlushTimeout: 5 * time.Second},
		Appender: nopAppender{}, Owners: noOwners{}, Instance: noOwners{},
	})
	if err != nil {
		t.Fatalf("app.New: %v", err)
	}
	c.svc = svc
	listing, err := app.NewListing(identitypg.New(runner), 100)
	if err != nil {
		t.Fatalf("app.NewListing: %v", err)
	}
	id, err := httpapi.New(httpapi.Deps{Authorizer: c.authz, Principals: svc, Tokens: svc.Tokens(), Devices: svc.Devices(), Listing: listing, TokensPageSize: 100})
	if err != nil {
		t.Fatalf("httpapi.New: %v", err)
	}
	r := chi.NewRouter()
	r.Use(
		func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				next.ServeHTTP(w, req.WithContext(logging.With(req.Context(), logger)))
			})
		},
		httpmw.Recover, httpmw.RequestID, httpmw.AccessLog(logger), httpmw.BodyLimit(1<<20),
	)
	strict := apigen.NewStrictHandlerWithOptions(testServer{id: id}, nil, apigen.StrictHTTPServerOptions{
		RequestErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, _ error) {
			problem.Write(w, r, problem.Validation(problem.FieldError{Field: "body", Message: "is not valid JSON"}))
		},
		ResponseErrorHandlerFunc: problem.Write,
	})
	apigen.HandlerWithOptions(strict, apigen.ChiServerOptions{
		BaseRouter:  r,
		Middlewares: []apigen.MiddlewareFunc{httpapi.Authenticate(svc)},
		ErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, _ error) {
			problem.Write(w, r, problem.Validation(problem.FieldError{Field: "request", Message: "has an invalid parameter"}))
		},
	})
	c.handler = r
	return c
}

// response is one answer of the stack.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request with token (none when empty) and checks the response against the OpenAPI
// document.
func (c *cycle) do(method, path, token string, body any) response {
	c.t.Helper()
	var reader io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			c.t.Fatalf("encode body: %v", err)
		}
		reader = bytes.NewReader(raw)
	}
	req := httptest.NewRequestWithContext(c.t.Context(), method, path, reader)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	c.handler.ServeHTTP(rec, req)
	resp := response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	if err := apitest.ValidateOperation(req.Context(), req, resp.status, resp.header, resp.body); err != nil {
		c.t.Errorf("%s %s: %v", method, path, err)
	}
	return resp
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

func (r response) problemCode(t *testing.T) string {
	t.Helper()
	var p problem.Problem
	r.decode(t, &p)
	return p.Code
}

// admin creates a person the fake authorizer treats as an instance admin and a token for it.
func (c *cycle) admin(handle string) (identity.Principal, string) {
	c.t.Helper()
	p, err := c.svc.CreatePerson(context.Background(), identity.PersonInput{DisplayName: handle, Handle: handle, Email: handle + "@example.com"})
	if err != nil {
		c.t.Fatalf("CreatePerson: %v", err)
	}
	tok, err := c.svc.Tokens().Issue(context.Background(), p.ID, nil)
	if err != nil {
		c.t.Fatalf("Issue: %v", err)
	}
	c.authz.mu.Lock()
	c.authz.admins[p.ID] = true
	c.authz.mu.Unlock()
	return p, tok.Token.Reveal()
}

func TestRequestCycle(t *testing.T) {
	t.Parallel()
	c := newCycle(t)
	alex, alexToken := c.admin("alex")
	var secrets []string

	// Alex reads itself.
	resp := c.do(http.MethodGet, "/api/v1/me", alexToken, nil)
	var me apigen.Principal
	resp.decode(t, &me)
	if resp.status != http.StatusOK || me.Id != alex.ID || me.Handle != "alex" {
		t.Fatalf("getMe: %d %s", resp.status, resp.body)
	}

	// Alex creates Sam, an app and a token for Sam on a pending device.
	resp = c.do(http.MethodPost, "/api/v1/people", alexToken, map[string]string{"display_name": "Sam", "handle": "Sam", "email": "sam@example.com"})
	var sam apigen.Principal
	resp.decode(t, &sam)
	if resp.status != http.StatusCreated || sam.Handle != "sam" || sam.Email == nil || *sam.Email != "sam@example.com" {
		t.Fatalf("createPerson: %d %s", resp.status, resp.body)
	}
	resp = c.do(http.MethodPost, "/api/v1/apps", alexToken, map[string]any{"display_name": "Build bot", "handle": "build-bot", "scopes": []string{"messages:read"}})
	if resp.status != http.StatusCreated {
		t.Fatalf("createApp: %d %s", resp.status, resp.body)
	}
	resp = c.do(http.MethodPost, "/api/v1/principals/"+sam.Id.String()+"/tokens", alexToken, map[string]string{"device_name": "Sam's phone"})
	var issued apigen.CreateTokenResponse
	resp.decode(t, &issued)
	if resp.status != http.StatusCreated || issued.DeviceId == nil || resp.header.Get("Cache-Control") != "no-store" ||
		issued.ExpiresAt == nil || !issued.ExpiresAt.Equal(created.Add(tokenTTL)) {
		t.Fatalf("createToken: %d %v %s", resp.status, resp.header, resp.body)
	}
	samToken := issued.Token
	secrets = append(secrets, alexToken, samToken)

	// Sam's device is pending: authenticated, but every action is refused.
	resp = c.do(http.MethodGet, "/api/v1/me", samToken, nil)
	if resp.status != http.StatusForbidden || resp.problemCode(t) != "device_pending" {
		t.Fatalf("getMe on a pending device: %d %s", resp.status, resp.body)
	}
	// Sam may not approve it; Alex may.
	resp = c.do(http.MethodPost, "/api/v1/devices/"+issued.DeviceId.String()+"/approve", samToken, nil)
	if resp.status != http.StatusForbidden {
		t.Fatalf("approveDevice by the pending device: %d %s", resp.status, resp.body)
	}
	resp = c.do(http.MethodPost, "/api/v1/devices/"+issued.DeviceId.String()+"/approve", alexToken, nil)
	var dev apigen.Device
	resp.decode(t, &dev)
	if resp.status != http.StatusOK || dev.Status != apigen.DeviceStatusApproved || dev.PrincipalId != sam.Id {
		t.Fatalf("approveDevice: %d %s", resp.status, resp.body)
	}
	resp = c.do(http.MethodGet, "/api/v1/me", samToken, nil)
	resp.decode(t, &me)
	if resp.status != http.StatusOK || me.Id != sam.Id {
		t.Fatalf("getMe after approval: %d %s", resp.status, resp.body)
	}

	// Sam is no admin: forbidden for everything but reading itself.
	for _, path := range []string{"/api/v1/people", "/api/v1/principals/" + alex.ID.String() + "/tokens"} {
		resp = c.do(http.MethodPost, path, samToken, map[string]string{"display_name": "Robin", "handle": "robin", "email": "robin@example.com"})
		if resp.status != http.StatusForbidden || resp.problemCode(t) != "forbidden" {
			t.Errorf("POST %s as Sam: %d %s", path, resp.status, resp.body)
		}
	}

	// Bad input, duplicates and unknown ids.
	tests := []struct {
		name       string
		method     string
		path       string
		body       any
		wantStatus int
		wantCode   string
		wantField  string
	}{
		{"taken handle", http.MethodPost, "/api/v1/people", map[string]string{"display_name": "Sam", "handle": "SAM", "email": "sam@example.com"}, 409, "conflict", ""},
		{"bad email", http.MethodPost, "/api/v1/people", map[string]string{"display_name": "Robin", "handle": "robin", "email": "robin"}, 400, "validation_failed", "email"},
		{"missing handle", http.MethodPost, "/api/v1/people", map[string]string{"display_name": "Robin", "email": "robin@example.com"}, 400, "validation_failed", "handle"},
		{"body not json", http.MethodPost, "/api/v1/people", "nope", 400, "validation_failed", "body"},
		{"unknown scope", http.MethodPost, "/api/v1/apps", map[string]any{"display_name": "Bot", "handle": "bot", "scopes": []string{"admin"}}, 400, "validation_failed", "scopes[0]"},
		{"no scopes", http.MethodPost, "/api/v1/apps", map[string]any{"display_name": "Bot", "handle": "bot", "scopes": []string{}}, 400, "validation_failed", "scopes"},
		{"status without device", http.MethodPost, "/api/v1/principals/" + sam.Id.String() + "/tokens", map[string]string{"device_status": "approved"}, 400, "validation_failed", "device_status"},
		{"revoked status", http.MethodPost, "/api/v1/principals/" + sam.Id.String() + "/tokens", map[string]string{"device_name": "x", "device_status": "revoked"}, 400, "validation_failed", "device_status"},
		{"unknown principal", http.MethodPost, "/api/v1/principals/" + uuid.NewString() + "/tokens", nil, 404, "not_found", ""},
		{"unknown device", http.MethodPost, "/api/v1/devices/" + uuid.NewString() + "/approve", nil, 404, "not_found", ""},
		{"malformed id", http.MethodPost, "/api/v1/devices/not-a-uuid/approve", nil, 400, "validation_failed", ""},
	}
	for _, tc := range tests {
		resp := c.do(tc.method, tc.path, alexToken, tc.body)
		var p problem.Problem
		resp.decode(t, &p)
		if resp.status != tc.wantStatus || p.Code != tc.wantCode {
			t.Errorf("%s: %d %s, want %d %s", tc.name, resp.status, resp.body, tc.wantStatus, tc.wantCode)
			continue
		}
		if tc.wantField != "" && (len(p.Errors) == 0 || p.Errors[0].Field != tc.wantField) {
			t.Errorf("%s: errors %v, want the field %s", tc.name, p.Errors, tc.wantField)
		}
	}

	// A 404 for a missing principal is the 404 of one the actor may not see.
	c.authz.SetErr(problem.ErrNotFound)
	hidden := c.do(http.MethodPost, "/api/v1/principals/"+sam.Id.String()+"/tokens", alexToken, nil)
	c.authz.SetErr(nil)
	missing := c.do(http.MethodPost, "/api/v1/principals/"+uuid.NewString()+"/tokens", alexToken, nil)
	if hidden.status != 404 || !bytes.Equal(withoutRequestID(hidden.body), withoutRequestID(missing.body)) {
		t.Errorf("404 bodies differ:\n%s\n%s", hidden.body, missing.body)
	}

	for _, s := range secrets {
		checkNoSecret(t, c.logText(), s)
	}
}

func TestUnauthenticatedAnswersAreIdentical(t *testing.T) {
	t.Parallel()
	c := newCycle(t)
	ctx := context.Background()
	alex, alexToken := c.admin("alex")
	expiring, _ := c.svc.Tokens().Issue(ctx, alex.ID, nil)
	revoked, _ := c.svc.Tokens().Issue(ctx, alex.ID, nil)
	onRevokedDevice, _ := c.svc.Tokens().Issue(ctx, alex.ID, &identity.DeviceInput{Name: "lost laptop", Status: identity.DeviceApproved})
	if _, err := c.svc.Tokens().Revoke(ctx, revoked.TokenID); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	if _, err := c.svc.Devices().Revoke(ctx, onRevokedDevice.DeviceID); err != nil {
		t.Fatalf("revoke device: %v", err)
	}
	c.clock.Advance(tokenTTL / 2)
	fresh, _ := c.svc.Tokens().Issue(ctx, alex.ID, nil)
	c.clock.Advance(tokenTTL / 2) // expiring (and alexToken) expire now; fresh has half its life left

	tests := []struct {
		name   string
		header []string
	}{
		{"missing", nil},
		{"malformed", []string{"Bearer bothy_short"}},
		{"other scheme", []string{"Basic " + fresh.Token.Reveal()}},
		{"unknown", []string{"Bearer bothy_" + strings.Repeat("x", 43)}},
		{"expired", []string{"Bearer " + expiring.Token.Reveal()}},
		{"revoked", []string{"Bearer " + revoked.Token.Reveal()}},
		{"revoked device", []string{"Bearer " + onRevokedDevice.Token.Reveal()}},
	}
	paths := []struct{ method, path string }{
		{http.MethodGet, "/api/v1/me"},
		{http.MethodPost, "/api/v1/people"},
		{http.MethodPost, "/api/v1/apps"},
		{http.MethodPost, "/api/v1/principals/" + alex.ID.String() + "/tokens"},
		{http.MethodPost, "/api/v1/devices/" + onRevokedDevice.DeviceID.String() + "/approve"},
	}
	var first []byte
	for _, p := range paths {
		for _, tc := range tests {
			req := httptest.NewRequestWithContext(t.Context(), p.method, p.path, strings.NewReader(`{"display_name":"Robin","handle":"robin","email":"robin@example.com","scopes":["agents:read"]}`))
			req.Header.Set("Content-Type", "application/json")
			for _, h := range tc.header {
				req.Header.Add("Authorization", h)
			}
			rec := httptest.NewRecorder()
			c.handler.ServeHTTP(rec, req)
			resp := response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
			if err := apitest.ValidateOperation(req.Context(), req, resp.status, resp.header, resp.body); err != nil {
				t.Errorf("%s %s: %v", p.path, tc.name, err)
			}
			if resp.status != http.StatusUnauthorized || resp.header.Get("WWW-Authenticate") != "Bearer" {
				t.Errorf("%s %s %s: %d, WWW-Authenticate %q", p.method, p.path, tc.name, resp.status, resp.header.Get("WWW-Authenticate"))
			}
			body := withoutRequestID(resp.body)
			if first == nil {
				first = body
			} else if !bytes.Equal(body, first) {
				t.Errorf("%s %s: body differs:\n%s\n%s", p.path, tc.name, body, first)
			}
		}
	}
	if resp := c.do(http.MethodGet, "/api/v1/me", fresh.Token.Reveal(), nil); resp.status != http.StatusOK {
		t.Errorf("a token within its lifetime: %d %s", resp.status, resp.body)
	}
	for _, s := range []string{alexToken, expiring.Token.Reveal(), revoked.Token.Reveal(), onRevokedDevice.Token.Reveal(), fresh.Token.Reveal()} {
		checkNoSecret(t, c.logText(), s)
	}
	if strings.Count(c.logText(), `"msg":"http request"`) != len(paths)*len(tests)+1 {
		t.Errorf("expected one access log line per request:\n%s", c.logText())
	}
}

// checkNoSecret fails when logs hold the token or its random part.
func checkNoSecret(t *testing.T, logs, token string) {
	t.Helper()
	random := strings.TrimPrefix(token, "bothy_")
	if strings.Contains(logs, token) || strings.Contains(logs, random) {
		t.Errorf("the logs hold a token secret:\n%s", logs)
	}
}

func withoutRequestID(body []byte) []byte {
	return requestIDMember.ReplaceAll(body, []byte(`"request_id":""`))
}

// nopAppender takes events and drops them: the events of identity are tested in the app
// package and, on the real log, in internal/wire.
type nopAppender struct{}

func (nopAppender) Append(context.Context, ...kernel.Event) error { return nil }

// noOwners names no owner, and the instance by the nil id's successor.
type noOwners struct{}

func (noOwners) InstanceOwners(context.Context) ([]uuid.UUID, error) { return nil, nil }

func (noOwners) InstanceID(context.Context) (uuid.UUID, error) {
	return uuid.MustParse("0190a6b2-7c1e-7d3a-9f00-0000000000aa"), nil
}
