package identity

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/authz/domain"
	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/correlation"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/wiretest"
)

// principal is an actor of the test with its token.
type principal struct {
	name  string
	token string
	actor actor.Actor
}

// world is an App with its owner and the actors the AZ-P1 test sends.
type world struct {
	env  *wiretest.Env
	logs *e2etest.LogBuffer
	alex principal
	// others hold no grant at all: what they may do is what the policy gives
	// every principal of their kind.
	others []principal
	// chat are the ids of a space, a channel, a thread and its first message
	// Alex made, by path parameter name: requests about them reach the use
	// cases' authorization (a random id would answer 404 before it).
	chat map[string]uuid.UUID
}

// newWorld wires an App and creates, through the API as Alex (the owner
// bootstrap made): Sam (a person), Robin (an agent), two apps with disjoint
// scopes (so every action some scope covers is missing from one of them,
// and actions no scope covers from both), and a token of Sam bound to a
// pending device.
func newWorld(t *testing.T) *world {
	t.Helper()
	logs := &e2etest.LogBuffer{}
	// The test sends credentials that fail on purpose for every operation, far more than
	// http.rate_limit.failed_auth_burst from one address: that limit is off here
	// (limits_test.go tests it).
	env := wiretest.New(t, wiretest.WithLogCopy(logs), wiretest.WithSetting(config.RateFailedAuthPerMinute, "0"))
	owner, err := e2etest.Bootstrap(t.Context(), env.App, "Alex", "alex", "alex@example.com")
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	w := &world{env: env, logs: logs, alex: principal{
		name:  "Alex (owner)",
		token: owner.Token.Reveal(),
		actor: actor.Actor{PrincipalID: owner.PrincipalID, Kind: actor.KindPerson},
	}}

	var sam struct {
		ID uuid.UUID `json:"id"`
	}
	w.call(t, w.alex, http.MethodPost, "/api/v1/people", `{"display_name":"Sam","handle":"sam","email":"sam@example.com"}`, http.StatusCreated, &sam)
	w.others = append(w.others, principal{
		name: "Sam (person, no grants)", token: w.issue(t, sam.ID, `{}`),
		actor: actor.Actor{PrincipalID: sam.ID, Kind: actor.KindPerson},
	})

	var robin struct {
		ID uuid.UUID `json:"id"`
	}
	w.call(t, w.alex, http.MethodPost, "/api/v1/agents", `{"display_name":"Robin","handle":"robin","description":"Summarises long threads."}`, http.StatusCreated, &robin)
	w.others = append(w.others, principal{
		name: "Robin (agent, no grants)", token: w.issue(t, robin.ID, `{}`),
		actor: actor.Actor{PrincipalID: robin.ID, Kind: actor.KindAgent},
	})

	for _, app := range []struct {
		name, handle string
		scopes       []string
	}{
		{"Build bot", "build-bot", []string{"agents:read"}},
		{"Feed reader", "feed-reader", []string{"events:subscribe", "messages:read", "messages:write"}},
	} {
		body, err := json.Marshal(map[string]any{"display_name": app.name, "handle": app.handle, "scopes": app.scopes})
		if err != nil {
			t.Fatal(err)
		}
		var created struct {
			ID uuid.UUID `json:"id"`
		}
		w.call(t, w.alex, http.MethodPost, "/api/v1/apps", string(body), http.StatusCreated, &created)
		w.others = append(w.others, principal{
			name:  fmt.Sprintf("%s (app %v, no grants)", app.name, app.scopes),
			token: w.issue(t, created.ID, `{}`),
			actor: actor.Actor{PrincipalID: created.ID, Kind: actor.KindApp, Scopes: app.scopes},
		})
	}

	w.others = append(w.others, principal{
		name:  "Sam on a pending device",
		token: w.issue(t, sam.ID, `{"device_name":"Sam's phone","device_status":"pending"}`),
		actor: actor.Actor{PrincipalID: sam.ID, Kind: actor.KindPerson, DevicePending: true},
	})

	var space, channel struct {
		ID uuid.UUID `json:"id"`
	}
	var thread struct {
		ID           uuid.UUID `json:"id"`
		FirstMessage struct {
			ID uuid.UUID `json:"id"`
		} `json:"first_message"`
	}
	w.call(t, w.alex, http.MethodPost, "/api/v1/spaces", `{"name":"Support"}`, http.StatusCreated, &space)
	w.call(t, w.alex, http.MethodPost, "/api/v1/spaces/"+space.ID.String()+"/channels", `{"name":"tickets"}`, http.StatusCreated, &channel)
	w.call(t, w.alex, http.MethodPost, "/api/v1/channels/"+channel.ID.String()+"/threads", `{"title":"Printer","content_md":"The printer is jammed"}`, http.StatusCreated, &thread)
	// A run in the thread, by an agent that is a member of the space, for Alex: requests
	// about it reach the runs' authorization on its thread.
	var runner, run struct {
		ID uuid.UUID `json:"id"`
	}
	w.call(t, w.alex, http.MethodPost, "/api/v1/agents", `{"display_name":"Runner","handle":"runner"}`, http.StatusCreated, &runner)
	w.call(t, w.alex, http.MethodPost, "/api/v1/grants", fmt.Sprintf(`{"principal_id":%q,"resource_kind":"space","resource_id":%q,"role":"member"}`, runner.ID, space.ID), http.StatusCreated, nil)
	runnerActor := principal{name: "Runner", token: w.issue(t, runner.ID, `{}`)}
	w.call(t, runnerActor, http.MethodPost, "/api/v1/threads/"+thread.ID.String()+"/runs", fmt.Sprintf(`{"requested_by":%q}`, w.alex.actor.PrincipalID), http.StatusCreated, &run)
	// An invocation of Runner by Alex's mention: requests about it reach thread.read on its thread.
	w.call(t, w.alex, http.MethodPost, "/api/v1/threads/"+thread.ID.String()+"/messages", `{"content_md":"@runner please look"}`, http.StatusCreated, nil)
	var invocationID uuid.UUID
	events, err := w.env.App.EventsAfter(t.Context(), 0, 1000)
	if err != nil {
		t.Fatalf("EventsAfter: %v", err)
	}
	for _, e := range events {
		if e.Type == "invocation.requested" {
			var p struct {
				ID uuid.UUID `json:"id"`
			}
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatalf("invocation payload: %v", err)
			}
			invocationID = p.ID
		}
	}
	if invocationID == uuid.Nil {
		t.Fatal("the mention of Runner made no invocation")
	}
	w.chat = map[string]uuid.UUID{
		"space_id": space.ID, "channel_id": channel.ID, "thread_id": thread.ID, "message_id": thread.FirstMessage.ID,
		"run_id": run.ID, "invocation_id": invocationID,
	}
	return w
}

// call sends a request as p and decodes the response into out, failing the
// test unless the status is want.
func (w *world) call(t *testing.T, p principal, method, path, body string, want int, out any) {
	t.Helper()
	req := w.env.Client.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+p.token)
	resp := w.env.Client.Do(req)
	if resp.Status != want {
		t.Fatalf("%s %s as %s = %d, want %d; body %s", method, path, p.name, resp.Status, want, resp.Body)
	}
	if out != nil {
		resp.JSON(t, out)
	}
}

// issue creates a token for the principal as Alex and returns its secret.
func (w *world) issue(t *testing.T, id uuid.UUID, body string) string {
	t.Helper()
	var tok struct {
		Token string `json:"token"`
	}
	w.call(t, w.alex, http.MethodPost, "/api/v1/principals/"+id.String()+"/tokens", body, http.StatusCreated, &tok)
	if tok.Token == "" {
		t.Fatal("createToken returned no token")
	}
	return tok.Token
}

// resourceOf is the resource the operation's handler authorizes, as far as
// the request names it: the instance; the resource named by the path
// parameter <kind>_id; the caller itself for the /api/v1/me paths; else the
// kind alone (a resource about to be created, the grant collection).
func resourceOf(o e2etest.APIOperation, ids map[string]uuid.UUID, self uuid.UUID) authorize.Resource {
	kind := kernel.ResourceKind(o.Resource)
	switch {
	case kind == kernel.ResourceInstance:
		return authorize.Instance()
	case ids[string(kind)+"_id"] != uuid.Nil:
		return authorize.Resource{Kind: kind, ID: ids[string(kind)+"_id"]}
	case kind == kernel.ResourcePrincipal && (o.Path == "/api/v1/me" || strings.HasPrefix(o.Path, "/api/v1/me/")):
		return authorize.Resource{Kind: kind, ID: self}
	case kind == kernel.ResourcePrincipal && (o.Path == "/api/v1/tokens" || strings.HasPrefix(o.Path, "/api/v1/tokens/")):
		// listTokens without principal_id and revokeToken's first decision are about the
		// actor's own tokens.
		return authorize.Resource{Kind: kind, ID: self}
	}
	return authorize.Resource{Kind: kind}
}

// expected is what the policy (authz/domain, the one table of spec 04)
// decides for a principal without any grant: its Scope is empty, so the
// decision is exactly what every principal of its kind, scopes and device
// status may do.
func expected(p principal, o e2etest.APIOperation, res authorize.Resource) domain.Decision {
	return domain.Decide(p.actor, authz.NewScope(p.actor.PrincipalID, 0, nil, nil), kernel.Action(o.Action), res)
}

// TestAZP1 is property AZ-P1 of spec 04 over the whole operation register:
// every enabled operation of api/operations.yaml is served, names an action
// and a resource, and rejects an actor without that action; every operation
// but the public ones answers 401 without a valid token, with the same body
// whatever was wrong. The test fails when an enabled operation is not
// exercised by every part (100% coverage of the enabled operations).
func TestAZP1(t *testing.T) {
	t.Parallel()
	ops := e2etest.EnabledOperations(t)
	w := newWorld(t)
	mux, ok := w.env.App.Handler().(chi.Routes)
	if !ok {
		t.Fatalf("the App's handler is a %T, not a chi router", w.env.App.Handler())
	}

	var (
		served, named, rejected, unauthenticated, public int
		denials, allowances, unaudited                   int
		uncovered                                        []string
		unauthBody                                       string
	)
	actions := kernel.Actions()
	kinds := kernel.ResourceKinds()
	for _, o := range ops {
		t.Run(o.ID, func(t *testing.T) {
			method := strings.ToUpper(o.Method)

			// Names an action and a resource (none only for the public ones),
			// and the policy has a rule for the pair: without one the action
			// would be denied to everyone, the owner included.
			if o.Public {
				if o.Action != "none" || o.Resource != "none" {
					t.Fatalf("public operation names action %q and resource %q, want none", o.Action, o.Resource)
				}
			} else {
				if !slices.Contains(actions, kernel.Action(o.Action)) || !slices.Contains(kinds, kernel.ResourceKind(o.Resource)) {
					t.Fatalf("names action %q on %q: not an action and resource kind of spec 04", o.Action, o.Resource)
				}
				if _, ok := domain.RuleFor(kernel.Action(o.Action), kernel.ResourceKind(o.Resource)); !ok {
					t.Fatalf("the policy has no rule for %s on %s: nobody could use the operation", o.Action, o.Resource)
				}
			}
			named++

			// Served: the router has the route, and the owner's request reaches
			// the operation (a documented status, never 401, 403 or 405).
			target := o.Target(t, nil)
			path, _, _ := strings.Cut(target, "?")
			if !mux.Match(chi.NewRouteContext(), method, path) {
				t.Fatalf("%s %s: no route serves it", method, path)
			}
			resp := w.env.Client.Do(o.Request(t, w.env.Client, "Bearer "+w.alex.token, nil, nil))
			switch resp.Status {
			case http.StatusUnauthorized, http.StatusForbidden, http.StatusMethodNotAllowed:
				t.Fatalf("%s %s as the owner = %d, want the operation's answer; body %s", method, path, resp.Status, resp.Body)
			}
			served++

			if o.Public {
				// No token needed, and a bad one is not even read.
				for _, auth := range []string{"", "Bearer not-a-token"} {
					r := w.env.Client.Do(o.Request(t, w.env.Client, auth, nil, nil))
					if r.Status == http.StatusUnauthorized {
						t.Fatalf("public operation answered 401 with Authorization %q; body %s", auth, r.Body)
					}
				}
				public++
				return
			}

			// 401 without a valid token, the same body in every case.
			for _, auth := range []string{
				"",                       // no header
				"Bearer",                 // no token
				"Basic c2FtOmh1bnRlcjI=", // another scheme
				"Bearer not-a-token",     // malformed
				"Bearer bothy_" + strings.Repeat("A", 43), // well formed, unknown
				"Bearer " + w.alex.token + "x",            // the owner's, altered
			} {
				r := w.env.Client.Do(o.Request(t, w.env.Client, auth, nil, nil))
				r.RequireProblem(t, http.StatusUnauthorized, "unauthenticated")
				body := e2etest.ProblemBody(t, r)
				if unauthBody == "" {
					unauthBody = body
				} else if body != unauthBody {
					t.Fatalf("401 body with Authorization %q differs:\n%s\nwant\n%s", auth, body, unauthBody)
				}
				if cred := strings.TrimPrefix(auth, "Bearer "); len(cred) > 8 && strings.Contains(string(r.Body), cred) {
					t.Fatalf("401 body repeats the credential: %s", r.Body)
				}
			}
			unauthenticated++

			// Rejects every actor the policy does not give the action, with the
			// policy's answer, after authorizing exactly the register's action
			// on the register's resource kind (the audit line of the denial
			// says so).
			rejectedHere := 0
			for _, p := range w.others {
				ids := maps.Clone(w.chat)
				req := o.Request(t, w.env.Client, "Bearer "+p.token, ids, nil)
				reqID := "azp1-" + uuid.NewString()
				req.Header.Set(correlation.Header, reqID)
				want := expected(p, o, resourceOf(o, ids, p.actor.PrincipalID))
				r := w.env.Client.Do(req)
				if want.Allowed() {
					if r.Status == http.StatusUnauthorized || r.Status == http.StatusForbidden {
						t.Fatalf("%s may %s by the policy, got %d; body %s", p.name, o.Action, r.Status, r.Body)
					}
					allowances++
					continue
				}
				wantProblem := problem.From(t.Context(), want.Err())
				r.RequireProblem(t, wantProblem.Status, wantProblem.Code)
				if strings.Contains(string(r.Body), p.token) {
					t.Fatalf("problem body holds the token: %s", r.Body)
				}
				audited := false
				for _, rec := range w.logs.Records(t, reqID) {
					if rec["msg"] != "authorization denied" {
						continue
					}
					if rec["action"] != o.Action || rec["resource_kind"] != o.Resource || rec["decision"] != string(want.Outcome) {
						t.Fatalf("%s: the handler authorized %v on %v (%v), want %s on %s (%s)",
							p.name, rec["action"], rec["resource_kind"], rec["decision"], o.Action, o.Resource, want.Outcome)
					}
					audited = true
				}
				switch {
				case audited:
				case want.Outcome == domain.OutcomeNotFound && len(ids) > 0:
					// The path names a random id: a handler that must load the
					// resource to learn its ancestors answers the same 404 for
					// a missing one before it can authorize.
					unaudited++
				default:
					t.Fatalf("%s was refused (%d) without an audited denial of %s: the handler did not authorize first", p.name, r.Status, o.Action)
				}
				denials++
				// A pending device is refused everything, which is not "without
				// the action": only the others count for the coverage.
				if !p.actor.DevicePending {
					rejectedHere++
				}
			}
			if rejectedHere == 0 {
				uncovered = append(uncovered, o.ID)
				t.Fatalf("no actor of the test lacks %s on %s: add one the policy refuses", o.Action, o.Resource)
			}
			rejected++
		})
	}

	enabled, nonPublic := len(ops), 0
	for _, o := range ops {
		if !o.Public {
			nonPublic++
		}
	}
	t.Logf("AZ-P1: %d enabled operations (%d public); served %d/%d, named %d/%d, 401 %d/%d, public without token %d/%d, rejected %d/%d; %d denials (%d of them 404s for a random id without an audit line) and %d allowances checked against the policy",
		enabled, enabled-nonPublic, served, enabled, named, enabled, unauthenticated, nonPublic, public, enabled-nonPublic, rejected, nonPublic, denials, unaudited, allowances)
	if t.Failed() {
		return
	}
	// Every audited denial is counted in the process's registry.
	var counted float64
	for line := range strings.Lines(string(w.env.Client.Get("/metrics").Body)) {
		if rest, ok := strings.CutPrefix(line, "bothy_authz_denials_total{"); ok {
			var v float64
			if _, err := fmt.Sscan(rest[strings.LastIndexByte(rest, ' ')+1:], &v); err != nil {
				t.Fatalf("metric line %q: %v", line, err)
			}
			counted += v
		}
	}
	if counted < float64(denials-unaudited) {
		t.Fatalf("bothy_authz_denials_total sums to %v, want at least the %d audited denials", counted, denials-unaudited)
	}
	if served != enabled || named != enabled || unauthenticated != nonPublic || public != enabled-nonPublic || rejected != nonPublic || len(uncovered) > 0 {
		t.Fatalf("AZ-P1 does not cover every enabled operation (uncovered: %v)", uncovered)
	}
}
