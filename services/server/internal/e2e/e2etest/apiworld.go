package wire_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	syncdomain "bothy.example.com/server/internal/sync/domain"
	"bothy.example.com/server/internal/wire/wiretest"
)

// worldActor is a principal of a test world with the bearer token it acts with.
type worldActor struct {
	name  string
	id    uuid.UUID
	token string
}

// apiWorld is a wired App that tests drive over real HTTP through the validating client
// (every response checked against api/openapi.yaml and for JSON null), acting as worldActors,
// and whose log they read through App.EventsAfter, never through SQL on another module's
// tables. admin creates what a test world needs but nobody in particular does: principals,
// tokens, spaces and grants. chatWorld and syncWorld embed it.
type apiWorld struct {
	env   *wiretest.Env
	admin worldActor
}

// person creates a person as the admin and issues a token for them.
func (w *apiWorld) person(t *testing.T, name, handle string) worldActor {
	t.Helper()
	var p apigen.Principal
	body := fmt.Sprintf(`{"display_name":%q,"handle":%q,"email":"%s@example.com"}`, name, handle, handle)
	w.must(t, w.admin, http.MethodPost, "/api/v1/people", body, http.StatusCreated, &p)
	return worldActor{name: name, id: p.Id, token: w.token(t, p.Id)}
}

// agent creates an agent as the admin and issues a token for it.
func (w *apiWorld) agent(t *testing.T, name, handle string) worldActor {
	t.Helper()
	var a apigen.Agent
	body := fmt.Sprintf(`{"display_name":%q,"handle":%q,"description":"Summarises long threads."}`, name, handle)
	w.must(t, w.admin, http.MethodPost, "/api/v1/agents", body, http.StatusCreated, &a)
	return worldActor{name: name + " (agent)", id: a.Id, token: w.token(t, a.Id)}
}

// app creates an app with the scopes as the admin and issues a token for it.
func (w *apiWorld) app(t *testing.T, name, handle string, scopes ...string) worldActor {
	t.Helper()
	body, err := json.Marshal(map[string]any{"display_name": name, "handle": handle, "scopes": append([]string{}, scopes...)})
	if err != nil {
		t.Fatal(err)
	}
	var p apigen.Principal
	w.must(t, w.admin, http.MethodPost, "/api/v1/apps", string(body), http.StatusCreated, &p)
	return worldActor{name: fmt.Sprintf("%s (app %v)", name, scopes), id: p.Id, token: w.token(t, p.Id)}
}

// token issues a token for the principal as the admin and returns its secret.
func (w *apiWorld) token(t *testing.T, id uuid.UUID) string {
	t.Helper()
	var tok apigen.CreateTokenResponse
	w.must(t, w.admin, http.MethodPost, "/api/v1/principals/"+id.String()+"/tokens", `{}`, http.StatusCreated, &tok)
	return tok.Token
}

// space creates a space as the admin.
func (w *apiWorld) space(t *testing.T, name string) uuid.UUID {
	t.Helper()
	var sp apigen.Space
	w.must(t, w.admin, http.MethodPost, "/api/v1/spaces", fmt.Sprintf(`{"name":%q}`, name), http.StatusCreated, &sp)
	return sp.Id
}

// channel creates a channel in the space as a.
func (w *apiWorld) channel(t *testing.T, a worldActor, space uuid.UUID, name string) uuid.UUID {
	t.Helper()
	var ch apigen.Channel
	w.must(t, a, http.MethodPost, "/api/v1/spaces/"+space.String()+"/channels", fmt.Sprintf(`{"name":%q}`, name), http.StatusCreated, &ch)
	return ch.Id
}

// thread starts a thread in the channel as a.
func (w *apiWorld) thread(t *testing.T, a worldActor, channel uuid.UUID, content string) apigen.Thread {
	t.Helper()
	var th apigen.Thread
	w.must(t, a, http.MethodPost, "/api/v1/channels/"+channel.String()+"/threads", fmt.Sprintf(`{"content_md":%q}`, content), http.StatusCreated, &th)
	if th.FirstMessage == nil {
		t.Fatal("createThread returned no first message")
	}
	return th
}

// post posts a message into the thread as a.
func (w *apiWorld) post(t *testing.T, a worldActor, thread uuid.UUID, content string) apigen.Message {
	t.Helper()
	var m apigen.Message
	w.must(t, a, http.MethodPost, "/api/v1/threads/"+thread.String()+"/messages", fmt.Sprintf(`{"content_md":%q}`, content), http.StatusCreated, &m)
	return m
}

// grant gives a the role on the resource as the admin and returns the grant's id.
func (w *apiWorld) grant(t *testing.T, a worldActor, kind string, resource uuid.UUID, role string) uuid.UUID {
	t.Helper()
	body := fmt.Sprintf(`{"principal_id":%q,"resource_kind":%q,"resource_id":%q,"role":%q}`, a.id, kind, resource, role)
	var g apigen.Grant
	w.must(t, w.admin, http.MethodPost, "/api/v1/grants", body, http.StatusCreated, &g)
	return g.Id
}

// revoke revokes the grant as the admin.
func (w *apiWorld) revoke(t *testing.T, grant uuid.UUID) {
	t.Helper()
	w.must(t, w.admin, http.MethodDelete, "/api/v1/grants/"+grant.String(), "", http.StatusNoContent, nil)
}

// do sends method path as a (no Authorization header for a zero actor) with body as JSON
// ("" for none) and header pairs (name, value, ...) through the validating client.
func (w *apiWorld) do(t *testing.T, a worldActor, method, path, body string, header ...string) *wiretest.Response {
	t.Helper()
	var req *http.Request
	if body == "" {
		req = w.env.Client.NewRequest(method, path, nil)
	} else {
		req = w.env.Client.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return w.env.Client.Do(req)
}

// must is do that fails the test unless the status is want, and decodes the body into out
// (unless nil).
func (w *apiWorld) must(t *testing.T, a worldActor, method, path, body string, want int, out any, header ...string) *wiretest.Response {
	t.Helper()
	r := w.do(t, a, method, path, body, header...)
	if r.Status != want {
		t.Fatalf("%s %s as %s = %d, want %d; body %s", method, path, a.name, r.Status, want, r.Body)
	}
	if out != nil {
		r.JSON(t, out)
	}
	return r
}

// head is the event log's head seq (the event_seq counter).
func (w *apiWorld) head(t *testing.T) int64 {
	t.Helper()
	seq, err := w.env.App.Versions().EventSeq(t.Context())
	if err != nil {
		t.Fatalf("EventSeq: %v", err)
	}
	return seq
}

// epoch is the instance's sync epoch.
func (w *apiWorld) epoch(t *testing.T) uuid.UUID {
	t.Helper()
	e, err := w.env.App.Versions().SyncEpoch(t.Context())
	if err != nil {
		t.Fatalf("SyncEpoch: %v", err)
	}
	return e
}

// eventsAfter reads every event of the log with a seq above after, as stored.
func (w *apiWorld) eventsAfter(t *testing.T, after int64) []syncdomain.StoredEvent {
	t.Helper()
	var out []syncdomain.StoredEvent
	for {
		page, err := w.env.App.EventsAfter(t.Context(), after, 500)
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
