package e2etest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	syncdomain "bothy.example.com/server/internal/sync/domain"
	"bothy.example.com/server/internal/wiretest"
)

// Actor is a principal of a test world with the bearer token it acts with.
type Actor struct {
	Name  string
	ID    uuid.UUID
	Token string
}

// World is a wired App that tests drive over real HTTP through the validating client
// (every response checked against api/openapi.yaml and for JSON null), acting as worldActors,
// and whose log they read through App.EventsAfter, never through SQL on another module's
// tables. admin creates what a test world needs but nobody in particular does: principals,
// tokens, spaces and grants. ChatWorld and SyncWorld embed it.
type World struct {
	Env   *wiretest.Env
	Admin Actor
}

// Person creates a person as the admin and issues a token for them.
func (w *World) Person(t *testing.T, name, handle string) Actor {
	t.Helper()
	var p apigen.Principal
	body := fmt.Sprintf(`{"display_name":%q,"handle":%q,"email":"%s@example.com"}`, name, handle, handle)
	w.Must(t, w.Admin, http.MethodPost, "/api/v1/people", body, http.StatusCreated, &p)
	return Actor{Name: name, ID: p.Id, Token: w.token(t, p.Id)}
}

// Agent creates an agent as the admin and issues a token for it.
func (w *World) Agent(t *testing.T, name, handle string) Actor {
	t.Helper()
	var a apigen.Agent
	body := fmt.Sprintf(`{"display_name":%q,"handle":%q,"description":"Summarises long threads."}`, name, handle)
	w.Must(t, w.Admin, http.MethodPost, "/api/v1/agents", body, http.StatusCreated, &a)
	return Actor{Name: name + " (agent)", ID: a.Id, Token: w.token(t, a.Id)}
}

// App creates an app with the scopes as the admin and issues a token for it.
func (w *World) App(t *testing.T, name, handle string, scopes ...string) Actor {
	t.Helper()
	body, err := json.Marshal(map[string]any{"display_name": name, "handle": handle, "scopes": append([]string{}, scopes...)})
	if err != nil {
		t.Fatal(err)
	}
	var p apigen.Principal
	w.Must(t, w.Admin, http.MethodPost, "/api/v1/apps", string(body), http.StatusCreated, &p)
	return Actor{Name: fmt.Sprintf("%s (app %v)", name, scopes), ID: p.Id, Token: w.token(t, p.Id)}
}

// token issues a token for the principal as the admin and returns its secret.
func (w *World) token(t *testing.T, id uuid.UUID) string {
	t.Helper()
	var tok apigen.CreateTokenResponse
	w.Must(t, w.Admin, http.MethodPost, "/api/v1/principals/"+id.String()+"/tokens", `{}`, http.StatusCreated, &tok)
	return tok.Token
}

// Space creates a space as the admin.
func (w *World) Space(t *testing.T, name string) uuid.UUID {
	t.Helper()
	var sp apigen.Space
	w.Must(t, w.Admin, http.MethodPost, "/api/v1/spaces", fmt.Sprintf(`{"name":%q}`, name), http.StatusCreated, &sp)
	return sp.Id
}

// Channel creates a channel in the space as a.
func (w *World) Channel(t *testing.T, a Actor, space uuid.UUID, name string) uuid.UUID {
	t.Helper()
	var ch apigen.Channel
	w.Must(t, a, http.MethodPost, "/api/v1/spaces/"+space.String()+"/channels", fmt.Sprintf(`{"name":%q}`, name), http.StatusCreated, &ch)
	return ch.Id
}

// Thread starts a thread in the channel as a.
func (w *World) Thread(t *testing.T, a Actor, channel uuid.UUID, content string) apigen.Thread {
	t.Helper()
	var th apigen.Thread
	w.Must(t, a, http.MethodPost, "/api/v1/channels/"+channel.String()+"/threads", fmt.Sprintf(`{"content_md":%q}`, content), http.StatusCreated, &th)
	if th.FirstMessage == nil {
		t.Fatal("createThread returned no first message")
	}
	return th
}

// Post posts a message into the thread as a.
func (w *World) Post(t *testing.T, a Actor, thread uuid.UUID, content string) apigen.Message {
	t.Helper()
	var m apigen.Message
	w.Must(t, a, http.MethodPost, "/api/v1/threads/"+thread.String()+"/messages", fmt.Sprintf(`{"content_md":%q}`, content), http.StatusCreated, &m)
	return m
}

// Grant gives a the role on the resource as the admin and returns the grant's id.
func (w *World) Grant(t *testing.T, a Actor, kind string, resource uuid.UUID, role string) uuid.UUID {
	t.Helper()
	body := fmt.Sprintf(`{"principal_id":%q,"resource_kind":%q,"resource_id":%q,"role":%q}`, a.ID, kind, resource, role)
	var g apigen.Grant
	w.Must(t, w.Admin, http.MethodPost, "/api/v1/grants", body, http.StatusCreated, &g)
	return g.Id
}

// Revoke revokes the grant as the admin.
func (w *World) Revoke(t *testing.T, grant uuid.UUID) {
	t.Helper()
	w.Must(t, w.Admin, http.MethodDelete, "/api/v1/grants/"+grant.String(), "", http.StatusNoContent, nil)
}

// Do sends method path as a (no Authorization header for a zero actor) with body as JSON
// ("" for none) and header pairs (name, value, ...) through the validating client.
func (w *World) Do(t *testing.T, a Actor, method, path, body string, header ...string) *wiretest.Response {
	t.Helper()
	var req *http.Request
	if body == "" {
		req = w.Env.Client.NewRequest(method, path, nil)
	} else {
		req = w.Env.Client.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	}
	if a.Token != "" {
		req.Header.Set("Authorization", "Bearer "+a.Token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return w.Env.Client.Do(req)
}

// Must is do that fails the test unless the status is want, and decodes the body into out
// (unless nil).
func (w *World) Must(t *testing.T, a Actor, method, path, body string, want int, out any, header ...string) *wiretest.Response {
	t.Helper()
	r := w.Do(t, a, method, path, body, header...)
	if r.Status != want {
		t.Fatalf("%s %s as %s = %d, want %d; body %s", method, path, a.Name, r.Status, want, r.Body)
	}
	if out != nil {
		r.JSON(t, out)
	}
	return r
}

// Head is the event log's head seq (the event_seq counter).
func (w *World) Head(t *testing.T) int64 {
	t.Helper()
	seq, err := w.Env.App.Versions().EventSeq(t.Context())
	if err != nil {
		t.Fatalf("EventSeq: %v", err)
	}
	return seq
}

// Epoch is the instance's sync epoch.
func (w *World) Epoch(t *testing.T) uuid.UUID {
	t.Helper()
	e, err := w.Env.App.Versions().SyncEpoch(t.Context())
	if err != nil {
		t.Fatalf("SyncEpoch: %v", err)
	}
	return e
}

// EventsAfter reads every event of the log with a seq above after, as stored.
func (w *World) EventsAfter(t *testing.T, after int64) []syncdomain.StoredEvent {
	t.Helper()
	var out []syncdomain.StoredEvent
	for {
		page, err := w.Env.App.EventsAfter(t.Context(), after, 500)
		if err != nil {
			t.Fatalf("EventsAfter(%d): %v", after, err)
		}
		out = append(out, page...)
		if len(page) < 500 {
			return out
		}
		after = page[len(page)-1].Seq
	}
}
