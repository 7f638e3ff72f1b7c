package httpapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"bothy.example.com/server/internal/identity/adapters/httpapi"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/httpmw"
	"bothy.example.com/server/internal/kernel/logging"
)

// Well-formed tokens the fake authenticator knows, built at run time so that no
// token-shaped literal sits in the source.
var (
	goodToken    = wellFormed('g')
	pendingToken = wellFormed('p')
)

// wellFormed returns a token of the right shape made of one repeated character.
func wellFormed(c byte) string {
	return "bothy_" + strings.Repeat(string(c), 43)
}

// chain serves the middleware under test behind the kernel's request id and logger, with a
// final handler that reports the actor it sees.
func chain(auth fakeAuthenticator, logs *bytes.Buffer) http.Handler {
	logger := logging.New(logs, slog.LevelDebug)
	final := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := actor.From(r.Context())
		if !ok {
			http.Error(w, "no actor", http.StatusTeapot)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"principal_id": a.PrincipalID, "pending": a.DevicePending})
	})
	h := httpapi.Authenticate(auth)(final)
	h = httpmw.AccessLog(logger)(h)
	h = httpmw.RequestID(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(logging.With(r.Context(), logger)))
	})
}

var requestIDMember = regexp.MustCompile(`"request_id":"[^"]*"`)

func TestAuthenticateRefusesAlike(t *testing.T) {
	t.Parallel()
	auth := fakeAuthenticator{actors: map[string]actor.Actor{goodToken: {PrincipalID: samID, Kind: actor.KindPerson}}}
	var logs bytes.Buffer
	h := chain(auth, &logs)
	tests := []struct {
		name    string
		headers []string
	}{
		{"missing", nil},
		{"empty", []string{""}},
		{"scheme only", []string{"Bearer"}},
		{"scheme and space", []string{"Bearer "}},
		{"basic", []string{"Basic " + goodToken}},
		{"no scheme", []string{goodToken}},
		{"token with a space", []string{"Bearer " + goodToken + " x"}},
		{"two headers", []string{"Bearer " + goodToken, "Bearer " + goodToken}},
		{"unknown token", []string{"Bearer bothy_" + strings.Repeat("A", 43)}},
		{"malformed token", []string{"Bearer not-a-token"}},
	}
	var first string
	for _, tc := range tests {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/api/v1/me", nil)
		for _, v := range tc.headers {
			req.Header.Add("Authorization", v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", tc.name, rec.Code)
		}
		if got := rec.Header().Get("WWW-Authenticate"); got != "Bearer" {
			t.Errorf("%s: WWW-Authenticate = %q, want Bearer", tc.name, got)
		}
		if got := rec.Header().Get("Content-Type"); got != "application/problem+json" {
			t.Errorf("%s: Content-Type = %q", tc.name, got)
		}
		body := requestIDMember.ReplaceAllString(rec.Body.String(), `"request_id":""`)
		if !strings.Contains(body, `"code":"unauthenticated"`) {
			t.Errorf("%s: body %s is not the unauthenticated problem", tc.name, body)
		}
		if first == "" {
			first = body
		} else if body != first {
			t.Errorf("%s: body differs from the first refusal:\n%s\n%s", tc.name, body, first)
		}
	}
	if strings.Contains(logs.String(), goodToken) {
		t.Errorf("the logs hold the token:\n%s", logs.String())
	}
}

func TestAuthenticatePassesTheActorOn(t *testing.T) {
	t.Parallel()
	auth := fakeAuthenticator{actors: map[string]actor.Actor{
		goodToken:    {PrincipalID: samID, Kind: actor.KindPerson},
		pendingToken: {PrincipalID: samID, Kind: actor.KindPerson, DeviceID: deviceID, DevicePending: true},
	}}
	var logs bytes.Buffer
	h := chain(auth, &logs)
	for _, header := range []string{"Bearer " + goodToken, "bearer " + goodToken, "BEARER   " + goodToken, "Bearer " + pendingToken} {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/api/v1/me", nil)
		req.Header.Set("Authorization", header)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Errorf("%q: status %d, body %s", header[:6], rec.Code, rec.Body.String())
			continue
		}
		var got struct {
			PrincipalID string `json:"principal_id"`
			Pending     bool   `json:"pending"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("decode: %v", err)
		}
		wantPending := strings.HasSuffix(header, pendingToken)
		if got.PrincipalID != samID.String() || got.Pending != wantPending {
			t.Errorf("actor = %+v, want Sam, pending %v", got, wantPending)
		}
	}
	for _, tok := range []string{goodToken, pendingToken} {
		if strings.Contains(logs.String(), tok) {
			t.Errorf("the logs hold a token:\n%s", logs.String())
		}
	}
}

func TestAuthenticateFailureIsInternal(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	h := chain(fakeAuthenticator{err: fmt.Errorf("identity: authenticate: %w", errors.New("connection refused"))}, &logs)
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/api/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+goodToken)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), `"code":"internal"`) {
		t.Errorf("status %d, body %s; want 500 internal", rec.Code, rec.Body.String())
	}
	if rec.Header().Get("WWW-Authenticate") != "" {
		t.Error("a 500 carries WWW-Authenticate")
	}
	if !strings.Contains(logs.String(), "connection refused") {
		t.Errorf("the failure was not logged:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), goodToken) || strings.Contains(rec.Body.String(), goodToken) {
		t.Error("the token reached the log or the body")
	}
}
