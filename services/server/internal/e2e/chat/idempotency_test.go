package chat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/wiretest"
)

// idempotencyTTL is the short http.idempotency_ttl of these tests; the fake clock moves past it.
const idempotencyTTL = time.Minute

// keyed is one App with the owner Alex and the person Sam (a member of the instance), both
// with a token, and the App's log lines.
type keyed struct {
	env  *wiretest.Env
	logs *e2etest.LogBuffer
	alex string
	sam  string
}

func newKeyed(t *testing.T) *keyed {
	t.Helper()
	logs := &e2etest.LogBuffer{}
	env := wiretest.New(t, wiretest.WithLogCopy(logs), wiretest.WithSetting(config.HTTPIdempotencyTTL, idempotencyTTL.String()))
	owner, err := e2etest.Bootstrap(t.Context(), env.App, "Alex", "alex", "alex@example.com")
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	k := &keyed{env: env, logs: logs, alex: owner.Token.Reveal()}
	var sam struct {
		ID uuid.UUID `json:"id"`
	}
	k.post(t, k.alex, "/api/v1/people", "", `{"display_name":"Sam","handle":"sam","email":"sam@example.com"}`).JSON(t, &sam)
	var tok struct {
		Token string `json:"token"`
	}
	k.post(t, k.alex, "/api/v1/principals/"+sam.ID.String()+"/tokens", "", `{}`).JSON(t, &tok)
	k.sam = tok.Token
	// Creating an agent needs member on the instance.
	if r := k.post(t, k.alex, "/api/v1/grants", "", `{"principal_id":"`+sam.ID.String()+`","resource_kind":"instance","role":"member"}`); r.Status != http.StatusCreated {
		t.Fatalf("createGrant = %d; body %s", r.Status, r.Body)
	}
	return k
}

// request builds POST path as the holder of token, with key as Idempotency-Key unless empty.
func (k *keyed) request(t *testing.T, token, path, key, body string) *http.Request {
	t.Helper()
	req := k.env.Client.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	return req
}

// post sends the request through the validating client.
func (k *keyed) post(t *testing.T, token, path, key, body string) *wiretest.Response {
	t.Helper()
	return k.env.Client.Do(k.request(t, token, path, key, body))
}

// agents lists the agents Alex sees (listAgents) and returns how many have each handle.
func (k *keyed) agents(t *testing.T) map[string]int {
	t.Helper()
	req := k.env.Client.NewRequest(http.MethodGet, "/api/v1/agents", nil)
	req.Header.Set("Authorization", "Bearer "+k.alex)
	r := k.env.Client.Do(req)
	if r.Status != http.StatusOK {
		t.Fatalf("listAgents = %d; body %s", r.Status, r.Body)
	}
	var list struct {
		Items []struct {
			Handle string `json:"handle"`
		} `json:"items"`
	}
	r.JSON(t, &list)
	out := map[string]int{}
	for _, a := range list.Items {
		out[a.Handle]++
	}
	return out
}

// head is the event log's head seq: every createAgent appends one event (agent.created).
func (k *keyed) head(t *testing.T) int64 {
	t.Helper()
	seq, err := k.env.App.Versions().EventSeq(t.Context())
	if err != nil {
		t.Fatalf("EventSeq: %v", err)
	}
	return seq
}

// purged returns the counts of the "expired idempotency keys purged" log lines so far.
func (k *keyed) purged(t *testing.T) []float64 {
	t.Helper()
	var out []float64
	sc := bufio.NewScanner(strings.NewReader(k.logs.String()))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		if m["msg"] == "expired idempotency keys purged" {
			n, _ := m["purged"].(float64)
			out = append(out, n)
		}
	}
	return out
}

func requireCreated(t *testing.T, r *wiretest.Response, replayed bool) {
	t.Helper()
	if r.Status != http.StatusCreated {
		t.Fatalf("status = %d, want 201; body %s", r.Status, r.Body)
	}
	want := ""
	if replayed {
		want = "true"
	}
	if got := r.Header.Get("Idempotency-Replayed"); got != want {
		t.Fatalf("Idempotency-Replayed = %q, want %q", got, want)
	}
}

const robinAgent = `{"display_name":"Robin","handle":"robin","description":"Summarises long threads."}`

// TestIdempotencyKeyReplaysWithoutASecondWrite sends createAgent twice with one key: the
// second gets the first's status and body with Idempotency-Replayed, and nothing is written
// again (one agent, one agent.created).
func TestIdempotencyKeyReplaysWithoutASecondWrite(t *testing.T) {
	t.Parallel()
	k := newKeyed(t)
	start := k.head(t)
	first := k.post(t, k.alex, "/api/v1/agents", "retry-alex-1", robinAgent)
	requireCreated(t, first, false)
	if k.head(t) != start+1 {
		t.Fatalf("createAgent appended %d events, want 1", k.head(t)-start)
	}
	second := k.post(t, k.alex, "/api/v1/agents", "retry-alex-1", robinAgent)
	requireCreated(t, second, true)
	if !bytes.Equal(first.Body, second.Body) || first.Header.Get("Content-Type") != second.Header.Get("Content-Type") {
		t.Fatalf("replay %s (%s) differs from %s (%s)", second.Body, second.Header.Get("Content-Type"), first.Body, first.Header.Get("Content-Type"))
	}
	if first.Header.Get("X-Request-Id") == second.Header.Get("X-Request-Id") {
		t.Fatal("the replay carries the first request's id")
	}
	if n := k.agents(t)["robin"]; n != 1 || k.head(t) != start+1 {
		t.Fatalf("%d agents named robin and %d events, want 1 and 1", n, k.head(t)-start)
	}

	// Without a key the same request runs and meets the taken handle.
	k.post(t, k.alex, "/api/v1/agents", "", robinAgent).RequireProblem(t, http.StatusConflict, "conflict")

	// createPerson is covered the same way (every POST is): had the retry run, the taken
	// handle would have answered 409, as a request with a new key does.
	sam := `{"display_name":"Sam Two","handle":"sam-two","email":"sam@example.com"}`
	p1 := k.post(t, k.alex, "/api/v1/people", "retry-alex-2", sam)
	p2 := k.post(t, k.alex, "/api/v1/people", "retry-alex-2", sam)
	requireCreated(t, p1, false)
	requireCreated(t, p2, true)
	if !bytes.Equal(p1.Body, p2.Body) {
		t.Fatalf("createPerson replay %s differs from %s", p2.Body, p1.Body)
	}
	k.post(t, k.alex, "/api/v1/people", "retry-alex-3", sam).RequireProblem(t, http.StatusConflict, "conflict")
}

func TestIdempotencyKeyWithAnotherRequestConflicts(t *testing.T) {
	t.Parallel()
	k := newKeyed(t)
	requireCreated(t, k.post(t, k.alex, "/api/v1/agents", "retry-alex-1", robinAgent), false)
	p := k.post(t, k.alex, "/api/v1/agents", "retry-alex-1", `{"display_name":"Robin","handle":"robin-two"}`).
		RequireProblem(t, http.StatusConflict, "conflict")
	if !strings.Contains(p.Detail, "Idempotency-Key") {
		t.Fatalf("detail %q does not name the key reuse", p.Detail)
	}
	if n := k.agents(t)["robin-two"]; n != 0 {
		t.Fatal("the conflicting request created its agent")
	}
}

// TestIdempotencyKeyConcurrentDuplicatesWriteOnce sends eight identical requests with one key
// at once: exactly one runs, the others wait for it and replay its response.
func TestIdempotencyKeyConcurrentDuplicatesWriteOnce(t *testing.T) {
	t.Parallel()
	k := newKeyed(t)
	start := k.head(t)
	const n = 8
	type result struct {
		req    *http.Request
		status int
		header http.Header
		body   []byte
		err    error
	}
	results := make([]result, n)
	begin := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		req := k.request(t, k.alex, "/api/v1/agents", "retry-alex-1", robinAgent)
		results[i].req = req
		wg.Go(func() {
			<-begin
			resp, err := k.env.Server.Client().Do(req)
			if err != nil {
				results[i].err = err
				return
			}
			defer func() { _ = resp.Body.Close() }()
			results[i].status, results[i].header = resp.StatusCode, resp.Header
			results[i].body, results[i].err = io.ReadAll(resp.Body)
		})
	}
	close(begin)
	wg.Wait()
	replayed := 0
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("request %d: %v", i, r.err)
		}
		if err := wiretest.Validate(t.Context(), r.req, r.status, r.header, r.body); err != nil {
			t.Fatalf("request %d breaks the contract: %v", i, err)
		}
		if r.status != http.StatusCreated || !bytes.Equal(r.body, results[0].body) {
			t.Fatalf("request %d = %d %s, want 201 %s", i, r.status, r.body, results[0].body)
		}
		if r.header.Get("Idempotency-Replayed") == "true" {
			replayed++
		}
	}
	if replayed != n-1 {
		t.Fatalf("%d replays, want %d", replayed, n-1)
	}
	if got := k.agents(t)["robin"]; got != 1 || k.head(t) != start+1 {
		t.Fatalf("%d agents and %d events, want 1 and 1", got, k.head(t)-start)
	}
}

func TestIdempotencyKeysBelongToTheActor(t *testing.T) {
	t.Parallel()
	k := newKeyed(t)
	requireCreated(t, k.post(t, k.alex, "/api/v1/agents", "shared-key", robinAgent), false)
	samAgent := `{"display_name":"Robin for Sam","handle":"robin-sam"}`
	first := k.post(t, k.sam, "/api/v1/agents", "shared-key", samAgent)
	requireCreated(t, first, false)
	again := k.post(t, k.sam, "/api/v1/agents", "shared-key", samAgent)
	requireCreated(t, again, true)
	if !bytes.Equal(first.Body, again.Body) {
		t.Fatalf("Sam's replay %s differs from %s", again.Body, first.Body)
	}
	if got := k.agents(t); got["robin"] != 1 || got["robin-sam"] != 1 {
		t.Fatalf("agents = %v, want Alex's and Sam's", got)
	}
}

func TestIdempotencyKeyMalformed(t *testing.T) {
	t.Parallel()
	k := newKeyed(t)
	for _, key := range []string{"retry alex", strings.Repeat("k", 256), "r\u00e9essai"} {
		p := k.post(t, k.alex, "/api/v1/agents", key, robinAgent).RequireProblem(t, http.StatusBadRequest, "validation_failed")
		if len(p.Errors) != 1 || p.Errors[0].Field != "Idempotency-Key" {
			t.Fatalf("errors = %+v, want one naming Idempotency-Key", p.Errors)
		}
	}
	if n := k.agents(t)["robin"]; n != 0 {
		t.Fatal("a request with a malformed key ran")
	}
	// Authentication comes first: without a token the key is never looked at.
	req := k.request(t, k.alex, "/api/v1/agents", "retry alex", robinAgent)
	req.Header.Del("Authorization")
	k.env.Client.Do(req).RequireProblem(t, http.StatusUnauthorized, "unauthenticated")
}

// TestIdempotencyKeyFromAPendingDevice: a device awaiting approval is refused as without the
// header, and never reaches the keys of its principal's approved devices.
func TestIdempotencyKeyFromAPendingDevice(t *testing.T) {
	t.Parallel()
	k := newKeyed(t)
	samAgent := `{"display_name":"Robin for Sam","handle":"robin-sam"}`
	requireCreated(t, k.post(t, k.sam, "/api/v1/agents", "retry-sam-1", samAgent), false)
	var me struct {
		ID uuid.UUID `json:"id"`
	}
	req := k.env.Client.NewRequest(http.MethodGet, "/api/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+k.sam)
	k.env.Client.Do(req).JSON(t, &me)
	var tok struct {
		Token string `json:"token"`
	}
	k.post(t, k.alex, "/api/v1/principals/"+me.ID.String()+"/tokens", "", `{"device_name":"Sam's phone","device_status":"pending"}`).JSON(t, &tok)
	for _, key := range []string{"retry-sam-1", "retry sam"} {
		k.post(t, tok.Token, "/api/v1/agents", key, samAgent).RequireProblem(t, http.StatusForbidden, "device_pending")
	}
}

// TestIdempotencyKeyExpires moves the clock past http.idempotency_ttl: the key runs again, and
// the maintenance purges what expired.
func TestIdempotencyKeyExpires(t *testing.T) {
	t.Parallel()
	k := newKeyed(t)
	requireCreated(t, k.post(t, k.alex, "/api/v1/agents", "retry-alex-1", robinAgent), false)
	k.env.Clock.Advance(idempotencyTTL - time.Second)
	requireCreated(t, k.post(t, k.alex, "/api/v1/agents", "retry-alex-1", robinAgent), true)

	k.env.Clock.Advance(time.Second)
	// Expired: the request runs again, and meets the handle its first run took.
	r := k.post(t, k.alex, "/api/v1/agents", "retry-alex-1", robinAgent)
	r.RequireProblem(t, http.StatusConflict, "conflict")
	if r.Header.Get("Idempotency-Replayed") != "" {
		t.Fatal("an expired key was replayed")
	}
	// The failed run kept nothing, so the key is free for another request.
	other := `{"display_name":"Robin Two","handle":"robin-two"}`
	requireCreated(t, k.post(t, k.alex, "/api/v1/agents", "retry-alex-1", other), false)
	requireCreated(t, k.post(t, k.alex, "/api/v1/agents", "retry-alex-1", other), true)
	requireCreated(t, k.post(t, k.alex, "/api/v1/agents", "retry-alex-2", `{"display_name":"Robin Three","handle":"robin-three"}`), false)

	// The maintenance purges the keys that expired, and only those: the first run finds both
	// keys live, the second (past their ttl) deletes both.
	before := len(k.purged(t))
	if _, err := k.env.App.Maintain(t.Context()); err != nil {
		t.Fatalf("Maintain: %v", err)
	}
	k.env.Clock.Advance(idempotencyTTL)
	if _, err := k.env.App.Maintain(t.Context()); err != nil {
		t.Fatalf("Maintain: %v", err)
	}
	if got := k.purged(t)[before:]; len(got) != 2 || got[0] != 0 || got[1] != 2 {
		t.Fatalf("purged per maintenance run = %v, want [0 2]", got)
	}
	// A purged key is free again.
	requireCreated(t, k.post(t, k.alex, "/api/v1/agents", "retry-alex-2", `{"display_name":"Robin Four","handle":"robin-four"}`), false)
}
