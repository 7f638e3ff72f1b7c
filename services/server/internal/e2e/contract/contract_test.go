package wire_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	identityapp "bothy.example.com/server/internal/identity/app"
	"bothy.example.com/server/internal/wire/wiretest"
)

// Contract fidelity (issue 13): what a client generated from api/openapi.yaml relies on. Every
// REST answer below goes through the validating client (wiretest.Validate); gateway frames are
// checked against the document's schemas with wiretest.ValidateSchema.

// rawEvent is an envelope with its actor and payload kept raw, for comparing strings.
type rawEvent struct {
	Seq        int64                      `json:"seq"`
	Type       string                     `json:"type"`
	Actor      map[string]json.RawMessage `json:"actor"`
	ResourceID struct {
		ID uuid.UUID `json:"id"`
	} `json:"resource"`
	Payload map[string]json.RawMessage `json:"payload"`
	raw     json.RawMessage
}

// restEnvelopes catches a up from after to the head over REST (validated page by page) and
// returns the envelopes.
func (w *chatWorld) restEnvelopes(t *testing.T, a worldActor, after int64) []rawEvent {
	t.Helper()
	head := w.head(t)
	var out []rawEvent
	for after < head {
		var page struct {
			Events     []json.RawMessage `json:"events"`
			NextCursor int64             `json:"next_cursor"`
		}
		w.must(t, a, http.MethodGet, eventsPath(after, 0, ""), "", http.StatusOK, &page)
		for _, raw := range page.Events {
			var e rawEvent
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatalf("envelope %s: %v", raw, err)
			}
			e.raw = raw
			out = append(out, e)
		}
		if page.NextCursor <= after {
			t.Fatalf("catch-up stuck at %d", after)
		}
		after = page.NextCursor
	}
	return out
}

// gatewayEnvelopes resumes a on the gateway from after and returns the envelopes up to the
// head, each checked against the document's Event schema.
func (w *chatWorld) gatewayEnvelopes(t *testing.T, a worldActor, after int64) []rawEvent {
	t.Helper()
	head := w.head(t)
	c := mustDial(t, w.env.Server.URL, a.token)
	c.send(fmt.Sprintf(`{"op":"resume","after":%d}`, after))
	var out []rawEvent
	for {
		f := c.next()
		switch f.Op {
		case "event":
			if err := wiretest.ValidateSchema("Event", f.Event); err != nil {
				t.Fatalf("gateway event %s breaks the API's Event schema: %v", f.Event, err)
			}
			var e rawEvent
			if err := json.Unmarshal(f.Event, &e); err != nil {
				t.Fatal(err)
			}
			e.raw = f.Event
			out = append(out, e)
		case "cursor", "heartbeat":
		case "catchup.complete":
			if f.Cursor != head {
				t.Fatalf("catchup.complete at %d, want %d", f.Cursor, head)
			}
			return out
		default:
			t.Fatalf("frame %s during resume", f.raw)
		}
	}
}

// TestSystemActor: flags.updated appended by the operator's command line (no principal behind
// it) names the system actor {id: the instance's id, kind: system, display_name: its name}, on
// REST (the validating client checks every page against EventActor) and on the gateway alike;
// every other event of the world names a principal, as a PrincipalRef.
func TestSystemActor(t *testing.T) {
	t.Parallel()
	w := gatewayWorld(t)
	from := w.head(t)
	ctx := t.Context()
	if _, err := w.env.App.DefineFlag(ctx, "threads.v2", "Threaded replies", false); err != nil {
		t.Fatalf("DefineFlag: %v", err)
	}
	if _, err := w.env.App.SetFlagOverride(ctx, "threads.v2", "kind:agent", true); err != nil {
		t.Fatalf("SetFlagOverride: %v", err)
	}
	if err := w.env.App.DeleteFlag(ctx, "threads.v2"); err != nil {
		t.Fatalf("DeleteFlag: %v", err)
	}
	var inst apigen.InstanceInfo
	w.must(t, w.sam, http.MethodGet, "/api/v1/instance", "", http.StatusOK, &inst)
	want := map[string]string{"id": inst.Id.String(), "kind": "system", "display_name": inst.Name}

	for _, reader := range []worldActor{w.alex, w.sam, w.robin} {
		rest := w.restEnvelopes(t, reader, from)
		live := w.gatewayEnvelopes(t, reader, from)
		if len(rest) != 3 || len(live) != 3 {
			t.Fatalf("%s got %d events on REST and %d on the gateway, want the 3 flags.updated", reader.name, len(rest), len(live))
		}
		for i, e := range rest {
			if e.Type != "flags.updated" || !slices.Equal(live[i].raw, e.raw) {
				t.Fatalf("%s: REST %s, gateway %s", reader.name, e.raw, live[i].raw)
			}
			if got := actorStrings(t, e.Actor); !equalMaps(got, want) {
				t.Fatalf("flags.updated actor %v, want %v", got, want)
			}
		}
	}

	// Every event of the world before: a principal, with its kind, name and handle.
	for _, e := range w.restEnvelopes(t, w.alex, 0) {
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
	w := gatewayWorld(t, wiretest.WithSetting(identityapp.KeyTokenTTL, "0s"))
	at := time.Date(2026, 12, 1, 9, 30, 35, 237283497, time.UTC)
	w.env.Clock.Set(at)
	const want = `"2026-12-01T09:30:35.237283Z"`
	from := w.head(t)

	createdAt := func(r *wiretest.Response) string {
		t.Helper()
		var m map[string]json.RawMessage
		r.JSON(t, &m)
		return string(m["created_at"])
	}
	space := w.must(t, w.alex, http.MethodPost, "/api/v1/spaces", `{"name":"Launch"}`, http.StatusCreated, nil)
	var sp apigen.Space
	space.JSON(t, &sp)
	channel := w.must(t, w.alex, http.MethodPost, "/api/v1/spaces/"+sp.Id.String()+"/channels", `{"name":"plans"}`, http.StatusCreated, nil)
	var ch apigen.Channel
	channel.JSON(t, &ch)
	thread := w.must(t, w.alex, http.MethodPost, "/api/v1/channels/"+ch.Id.String()+"/threads", `{"content_md":"Dates for the launch"}`, http.StatusCreated, nil)
	var th struct {
		ID           uuid.UUID                  `json:"id"`
		CreatedAt    json.RawMessage            `json:"created_at"`
		FirstMessage map[string]json.RawMessage `json:"first_message"`
	}
	thread.JSON(t, &th)
	post := w.must(t, w.alex, http.MethodPost, "/api/v1/threads/"+th.ID.String()+"/messages", `{"content_md":"Robin has them"}`, http.StatusCreated, nil)
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

	for transport, events := range map[string][]rawEvent{"REST": w.restEnvelopes(t, w.alex, from), "gateway": w.gatewayEnvelopes(t, w.alex, from)} {
		for _, e := range events {
			if what, ok := byID[e.ResourceID.ID]; ok && e.Payload["created_at"] != nil {
				seen[what] = append(seen[what], string(e.Payload["created_at"]))
			} else if other := e.Payload["created_at"]; other != nil {
				t.Logf("%s: %s has created_at %s", transport, e.Type, other)
			}
		}
	}
	var spaces apigen.SpaceViewList
	w.must(t, w.alex, http.MethodGet, "/api/v1/spaces", "", http.StatusOK, &spaces)
	var channels apigen.ChannelViewList
	w.must(t, w.alex, http.MethodGet, "/api/v1/spaces/"+sp.Id.String()+"/channels", "", http.StatusOK, &channels)
	var messages apigen.MessageList
	w.must(t, w.alex, http.MethodGet, "/api/v1/threads/"+th.ID.String()+"/messages", "", http.StatusOK, &messages)
	var snap apigen.Snapshot
	w.must(t, w.alex, http.MethodGet, "/api/v1/sync/snapshot", "", http.StatusOK, &snap)
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
	w := newChatWorld(t, false)
	for _, tc := range []struct {
		path   string
		as     worldActor
		status int
	}{
		{"/healthz", worldActor{}, http.StatusOK},
		{"/readyz", worldActor{}, http.StatusOK},
		{"/api/v1/spaces", w.alex, http.StatusOK},
		{"/api/v1/me", w.sam, http.StatusOK},
		{"/api/v1/sync/snapshot", w.sam, http.StatusOK},
		{"/api/v1/threads/" + w.ticketThread.String() + "/messages", w.alex, http.StatusOK},
		{"/api/v1/spaces", worldActor{}, http.StatusUnauthorized},
	} {
		// Go's client asks for gzip on a GET (and undoes it, dropping Content-Length), never
		// on a HEAD: both ask for the identity coding here (httpmw's tests cover gzip).
		get := w.do(t, tc.as, http.MethodGet, tc.path, "", "Accept-Encoding", "identity")
		head := w.do(t, tc.as, http.MethodHead, tc.path, "", "Accept-Encoding", "identity")
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
	r := w.do(t, w.alex, http.MethodPut, "/api/v1/spaces", "")
	r.RequireProblem(t, http.StatusMethodNotAllowed, "method_not_allowed")
	if got := r.Header.Get("Allow"); got != "GET, HEAD, POST" {
		t.Fatalf("Allow = %q, want GET, HEAD, POST", got)
	}
	// A path without GET has no HEAD either.
	r = w.do(t, w.alex, http.MethodHead, "/api/v1/people", "")
	if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST" {
		t.Fatalf("HEAD /api/v1/people = %d, Allow %q; want 405, POST", r.Status, r.Header.Get("Allow"))
	}
}
