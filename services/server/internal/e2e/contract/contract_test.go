package contract

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
	identityapp "bothy.example.com/server/internal/identity/app"
	"bothy.example.com/server/internal/wiretest"
)

// TestSystemActor: flags.updated appended by the operator's command line (no principal behind
// it) names the system actor {id: the instance's id, kind: system, display_name: its name}, on
// REST (the validating client checks every page against EventActor) and on the gateway alike;
// every other event of the world names a principal, as a PrincipalRef.
func TestSystemActor(t *testing.T) {
	t.Parallel()
	w := e2etest.GatewayWorld(t)
	from := w.Head(t)
	ctx := t.Context()
	if _, err := w.Env.App.Ports().Flags.Define(ctx, "threads.v2", "Threaded replies", false); err != nil {
		t.Fatalf("DefineFlag: %v", err)
	}
	if _, err := w.Env.App.Ports().Flags.SetOverride(ctx, "threads.v2", e2etest.FlagTarget(t, "kind:agent"), true); err != nil {
		t.Fatalf("SetFlagOverride: %v", err)
	}
	if err := w.Env.App.Ports().Flags.Delete(ctx, "threads.v2"); err != nil {
		t.Fatalf("DeleteFlag: %v", err)
	}
	var inst apigen.InstanceInfo
	w.Must(t, w.Sam, http.MethodGet, "/api/v1/instance", "", http.StatusOK, &inst)
	want := map[string]string{"id": inst.Id.String(), "kind": "system", "display_name": inst.Name}

	for _, reader := range []e2etest.Actor{w.Alex, w.Sam, w.Robin} {
		rest := w.RestEnvelopes(t, reader, from)
		live := w.GatewayEnvelopes(t, reader, from)
		if len(rest) != 3 || len(live) != 3 {
			t.Fatalf("%s got %d events on REST and %d on the gateway, want the 3 flags.updated", reader.Name, len(rest), len(live))
		}
		for i, e := range rest {
			if e.Type != "flags.updated" || !slices.Equal(live[i].Raw, e.Raw) {
				t.Fatalf("%s: REST %s, gateway %s", reader.Name, e.Raw, live[i].Raw)
			}
			if got := actorStrings(t, e.Actor); !equalMaps(got, want) {
				t.Fatalf("flags.updated actor %v, want %v", got, want)
			}
		}
	}

	// Every event of the world before: a principal, with its kind, name and handle.
	for _, e := range w.RestEnvelopes(t, w.Alex, 0) {
		if e.Type == "flags.updated" {
			continue
		}
		got := actorStrings(t, e.Actor)
		if !slices.Contains([]string{"person", "agent", "app"}, got["kind"]) || got["handle"] == "" || got["display_name"] == "" {
			t.Fatalf("%s (seq %d) names the actor %v", e.Type, e.Seq, got)
		}
	}
}

func actorStrings(t *testing.T, actor map[string]json.RawMessage) map[string]string {
	t.Helper()
	out := make(map[string]string, len(actor))
	for k, v := range actor {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			t.Fatalf("actor member %s = %s", k, v)
		}
		out[k] = s
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestTimestampsOneString: with the clock at an instant with nanoseconds, an object's
// created_at is one string in its create response, its event's payload (REST and gateway),
// every list that reads it back and the snapshot: times are cut to microseconds where they
// are taken (clock.Precision), not by the database on the way in.
func TestTimestampsOneString(t *testing.T) {
	t.Parallel()
	// Tokens that never expire: the clock jumps ahead.
	w := e2etest.GatewayWorld(t, wiretest.WithSetting(identityapp.KeyTokenTTL, "0s"))
	at := time.Date(2026, 12, 1, 9, 30, 35, 237283497, time.UTC)
	w.Env.Clock.Set(at)
	const want = `"2026-12-01T09:30:35.237283Z"`
	from := w.Head(t)

	createdAt := func(r *wiretest.Response) string {
		t.Helper()
		var m map[string]json.RawMessage
		r.JSON(t, &m)
		return string(m["created_at"])
	}
	space := w.Must(t, w.Alex, http.MethodPost, "/api/v1/spaces", `{"name":"Launch"}`, http.StatusCreated, nil)
	var sp apigen.Space
	space.JSON(t, &sp)
	channel := w.Must(t, w.Alex, http.MethodPost, "/api/v1/spaces/"+sp.Id.String()+"/channels", `{"name":"plans"}`, http.StatusCreated, nil)
	var ch apigen.Channel
	channel.JSON(t, &ch)
	thread := w.Must(t, w.Alex, http.MethodPost, "/api/v1/channels/"+ch.Id.String()+"/threads", `{"content_md":"Dates for the launch"}`, http.StatusCreated, nil)
	var th struct {
		ID           uuid.UUID                  `json:"id"`
		CreatedAt    json.RawMessage            `json:"created_at"`
		FirstMessage map[string]json.RawMessage `json:"first_message"`
	}
	thread.JSON(t, &th)
	post := w.Must(t, w.Alex, http.MethodPost, "/api/v1/threads/"+th.ID.String()+"/messages", `{"content_md":"Robin has them"}`, http.StatusCreated, nil)
	var m apigen.Message
	post.JSON(t, &m)

	// what -> every string seen for it.
	seen := map[string][]string{
		"space":         {createdAt(space)},
		"channel":       {createdAt(channel)},
		"thread":        {string(th.CreatedAt)},
		"first message": {string(th.FirstMessage["created_at"])},
		"message":       {createdAt(post)},
	}
	byID := map[uuid.UUID]string{sp.Id: "space", ch.Id: "channel", th.ID: "thread", m.Id: "message"}
	var firstID uuid.UUID
	if err := json.Unmarshal(th.FirstMessage["id"], &firstID); err != nil {
		t.Fatal(err)
	}
	byID[firstID] = "first message"

	for transport, events := range map[string][]e2etest.RawEvent{"REST": w.RestEnvelopes(t, w.Alex, from), "gateway": w.GatewayEnvelopes(t, w.Alex, from)} {
		for _, e := range events {
			if what, ok := byID[e.ResourceID.ID]; ok && e.Payload["created_at"] != nil {
				seen[what] = append(seen[what], string(e.Payload["created_at"]))
			} else if other := e.Payload["created_at"]; other != nil {
				t.Logf("%s: %s has created_at %s", transport, e.Type, other)
			}
		}
	}
	var spaces apigen.SpaceViewList
	w.Must(t, w.Alex, http.MethodGet, "/api/v1/spaces", "", http.StatusOK, &spaces)
	var channels apigen.ChannelViewList
	w.Must(t, w.Alex, http.MethodGet, "/api/v1/spaces/"+sp.Id.String()+"/channels", "", http.StatusOK, &channels)
	var messages apigen.MessageList
	w.Must(t, w.Alex, http.MethodGet, "/api/v1/threads/"+th.ID.String()+"/messages", "", http.StatusOK, &messages)
	var snap apigen.Snapshot
	w.Must(t, w.Alex, http.MethodGet, "/api/v1/sync/snapshot", "", http.StatusOK, &snap)
	quoted := func(v time.Time) string { return strconv.Quote(v.Format(time.RFC3339Nano)) }
	for _, s := range append(spaces.Items, snap.Spaces...) {
		if s.Id == sp.Id {
			seen["space"] = append(seen["space"], quoted(s.CreatedAt))
		}
	}
	for _, c := range append(channels.Items, snap.Channels...) {
		if c.Id == ch.Id {
			seen["channel"] = append(seen["channel"], quoted(c.CreatedAt))
		}
	}
	for _, msg := range messages.Items {
		if what, ok := byID[msg.Id]; ok {
			seen[what] = append(seen[what], quoted(msg.CreatedAt))
		}
	}

	for what, got := range seen {
		// The create response, two event payloads (REST and gateway) but for the thread
		// (thread.created carries none), and the reads.
		if len(got) < 3 && what != "thread" {
			t.Errorf("%s: only %v seen", what, got)
		}
		for _, s := range got {
			if s != want {
				t.Errorf("%s: created_at strings %v, want every one %s", what, got, want)
				break
			}
		}
	}
}

// TestHeadLikeGet: HEAD is answered wherever GET is, with the GET's status and headers and no
// body (the validating client checks it against the GET operation): the public health and
// readiness, an authenticated read, the snapshot with its ETag, and a 401 without a token. A
// path without GET answers 405 with Allow, which names HEAD beside GET where GET exists.
func TestHeadLikeGet(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	for _, tc := range []struct {
		path   string
		as     e2etest.Actor
		status int
	}{
		{"/healthz", e2etest.Actor{}, http.StatusOK},
		{"/readyz", e2etest.Actor{}, http.StatusOK},
		{"/api/v1/spaces", w.Alex, http.StatusOK},
		{"/api/v1/me", w.Sam, http.StatusOK},
		{"/api/v1/sync/snapshot", w.Sam, http.StatusOK},
		{"/api/v1/threads/" + w.TicketThread.String() + "/messages", w.Alex, http.StatusOK},
		{"/api/v1/spaces", e2etest.Actor{}, http.StatusUnauthorized},
	} {
		// Go's client asks for gzip on a GET (and undoes it, dropping Content-Length), never
		// on a HEAD: both ask for the identity coding here (httpmw's tests cover gzip).
		get := w.Do(t, tc.as, http.MethodGet, tc.path, "", "Accept-Encoding", "identity")
		head := w.Do(t, tc.as, http.MethodHead, tc.path, "", "Accept-Encoding", "identity")
		if get.Status != tc.status || head.Status != tc.status {
			t.Fatalf("%s: GET %d, HEAD %d, want %d", tc.path, get.Status, head.Status, tc.status)
		}
		if len(head.Body) != 0 {
			t.Fatalf("HEAD %s has a body: %s", tc.path, head.Body)
		}
		for _, h := range []string{"Content-Type", "Content-Length", "ETag", "Cache-Control", "Vary", "WWW-Authenticate"} {
			if get.Header.Get(h) != head.Header.Get(h) {
				t.Errorf("HEAD %s: %s %q, GET has %q", tc.path, h, head.Header.Get(h), get.Header.Get(h))
			}
		}
	}
	r := w.Do(t, w.Alex, http.MethodPut, "/api/v1/spaces", "")
	r.RequireProblem(t, http.StatusMethodNotAllowed, "method_not_allowed")
	if got := r.Header.Get("Allow"); got != "GET, HEAD, POST" {
		t.Fatalf("Allow = %q, want GET, HEAD, POST", got)
	}
	// A path without GET has no HEAD either.
	r = w.Do(t, w.Alex, http.MethodHead, "/api/v1/people", "")
	if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST" {
		t.Fatalf("HEAD /api/v1/people = %d, Allow %q; want 405, POST", r.Status, r.Header.Get("Allow"))
	}
}
