package edge

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/e2e/e2etest"
	identityapp "bothy.example.com/server/internal/identity/app"
	"bothy.example.com/server/internal/wiretest"
)

// TestTokensNeverLogged runs full request cycles (the owner bootstrap,
// authenticated requests that create principals and issue tokens, denials,
// bad input, conflicts, every kind of failed authentication, expired
// tokens, and 500s from a database that went away) with the App's log
// captured, then searches the log and every problem body for each token
// secret the test saw or sent: none may appear (spec 07: secrets never reach
// logs, events or errors).
func TestTokensNeverLogged(t *testing.T) {
	t.Parallel()
	logs := &e2etest.LogBuffer{}
	env := wiretest.New(t, wiretest.WithLogCopy(logs))
	c := env.Client
	owner, err := e2etest.Bootstrap(t.Context(), env.App, "Alex", "alex", "alex@example.com")
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	secrets := []string{owner.Token.Reveal()}
	var problems []string

	send := func(method, path, auth, body string) *wiretest.Response {
		t.Helper()
		var req *http.Request
		if body == "" {
			req = c.NewRequest(method, path, nil)
		} else {
			req = c.NewRequest(method, path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp := c.Do(req)
		if resp.Status >= 400 {
			problems = append(problems, string(resp.Body))
		}
		return resp
	}
	alex := "Bearer " + owner.Token.Reveal()

	// Authenticated requests, issuing tokens whose secrets are in responses.
	if r := send(http.MethodGet, "/api/v1/me", alex, ""); r.Status != http.StatusOK {
		t.Fatalf("getMe = %d; body %s", r.Status, r.Body)
	}
	var sam struct {
		ID uuid.UUID `json:"id"`
	}
	r := send(http.MethodPost, "/api/v1/people", alex, `{"display_name":"Sam","handle":"sam","email":"sam@example.com"}`)
	r.JSON(t, &sam)
	issue := func(body string) string {
		t.Helper()
		var tok struct {
			Token string `json:"token"`
		}
		r := send(http.MethodPost, "/api/v1/principals/"+sam.ID.String()+"/tokens", alex, body)
		if r.Status != http.StatusCreated {
			t.Fatalf("createToken = %d; body %s", r.Status, r.Body)
		}
		r.JSON(t, &tok)
		secrets = append(secrets, tok.Token)
		return tok.Token
	}
	samToken := issue(`{}`)
	pending := issue(`{"device_name":"Sam's phone","device_status":"pending"}`)
	samAuth := "Bearer " + samToken

	// Denials (audited with a log line), bad input, conflicts, not found.
	send(http.MethodPost, "/api/v1/people", samAuth, `{"display_name":"Robin","handle":"robin","email":"robin@example.com"}`)
	send(http.MethodGet, "/api/v1/me", "Bearer "+pending, "")
	send(http.MethodPost, "/api/v1/people", alex, `{"display_name":"","handle":"x","email":"not an address"}`)
	send(http.MethodPost, "/api/v1/people", alex, `{"display_name":"Sam","handle":"sam","email":"sam@example.com"}`)
	send(http.MethodPost, "/api/v1/people", alex, `{"display_name":`)
	send(http.MethodPost, "/api/v1/principals/"+uuid.NewString()+"/tokens", alex, `{}`)
	send(http.MethodPost, "/api/v1/devices/"+uuid.NewString()+"/approve", alex, "")
	send(http.MethodPost, "/api/v1/principals/not-a-uuid/tokens", alex, `{}`)

	// Failed authentication of every kind, some with secret-shaped values.
	unknown := "bothy_" + strings.Repeat("Zq", 21) + "Z"
	secrets = append(secrets, unknown, samToken+"A", "hunter2hunter2")
	for _, auth := range []string{
		"Bearer " + unknown,
		"Bearer " + samToken + "A",
		"Basic hunter2hunter2",
		"Bearer " + samToken + " " + samToken,
		"bearer  " + unknown,
	} {
		if r := send(http.MethodGet, "/api/v1/me", auth, ""); r.Status != http.StatusUnauthorized {
			t.Fatalf("getMe with %q = %d, want 401", auth, r.Status)
		}
	}

	// Expired tokens: past identity.token_ttl every token is refused.
	env.Clock.Advance(mustDuration(t, identityapp.KeyTokenTTL.Default) + time.Hour)
	if r := send(http.MethodGet, "/api/v1/me", samAuth, ""); r.Status != http.StatusUnauthorized {
		t.Fatalf("expired token: getMe = %d, want 401", r.Status)
	}
	env.Clock.Set(wiretest.Epoch)

	// The last uses are flushed (a database write naming the tokens by id).
	if err := env.App.FlushTokenUse(t.Context()); err != nil {
		t.Fatalf("flush: %v", err)
	}

	// The database goes away: authentication fails with a 500 whose logged
	// error must not hold the token either.
	env.App.Pool().Close()
	for _, auth := range []string{alex, samAuth} {
		if r := send(http.MethodGet, "/api/v1/me", auth, ""); r.Status != http.StatusInternalServerError {
			t.Fatalf("getMe without a database = %d, want 500; body %s", r.Status, r.Body)
		}
	}

	log := logs.String()
	if !strings.Contains(log, `"msg":"authorization denied"`) || !strings.Contains(log, `"status":500`) || !strings.Contains(log, `"status":401`) {
		t.Fatalf("the captured log lacks the cycles it should hold:\n%s", log)
	}
	for _, s := range secrets {
		// A secret or any long part of it (a truncated or re-encoded copy).
		for _, part := range []string{s, s[:min(len(s), 20)], s[max(0, len(s)-20):]} {
			if strings.Contains(log, part) {
				t.Fatalf("the log holds token material %q:\n%s", part, log)
			}
			for _, p := range problems {
				if strings.Contains(p, part) {
					t.Fatalf("a problem body holds token material %q: %s", part, p)
				}
			}
		}
	}
	t.Logf("searched %d log bytes and %d problem bodies for %d secrets", len(log), len(problems), len(secrets))
}

// mustDuration parses a duration key's default.
func mustDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("duration %q: %v", s, err)
	}
	return d
}
