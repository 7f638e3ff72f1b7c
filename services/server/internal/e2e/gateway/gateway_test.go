package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	"bothy.example.com/server/internal/wire"
	"bothy.example.com/server/internal/wiretest"
)

// TestGatewayResumeEqualsRESTCatchUp resumes Sam from every cursor of the log while Alex
// keeps posting: each connection's events, catch-up and live, are exactly what ListEvents
// gives Sam from that cursor (same events, same order, nothing twice), with one
// catchup.complete between.
func TestGatewayResumeEqualsRESTCatchUp(t *testing.T) {
	t.Parallel()
	w := e2etest.GatewayWorld(t)
	head := w.Head(t)
	writing := w.Poster([]uuid.UUID{w.TicketThread, w.CampaignThread}, 20)
	clients := make([]*e2etest.GatewayClient, head+1)
	for after := range head + 1 {
		c := e2etest.MustDial(t, w.Env.Server.URL, w.Sam.Token)
		c.Send(fmt.Sprintf(`{"op":"resume","after":%d}`, after))
		clients[after] = c
	}
	if err := <-writing; err != nil {
		t.Fatalf("poster: %v", err)
	}
	final := w.Head(t)
	want := w.RestEvents(t, w.Sam, 0, final)
	if len(want) < 20 {
		t.Fatalf("REST catch-up gave Sam %d events, want at least the 20 posts", len(want))
	}
	for after, c := range clients {
		got, completes := c.Until(final, true)
		wantFrom := slices.DeleteFunc(slices.Clone(want), func(s int64) bool { return s <= int64(after) })
		if !slices.Equal(e2etest.GatewaySeqs(got), wantFrom) {
			t.Errorf("resume after %d: gateway %v, listEvents %v", after, e2etest.GatewaySeqs(got), wantFrom)
		}
		if completes != 1 {
			t.Errorf("resume after %d: %d catchup.complete frames", after, completes)
		}
	}
}

// TestGatewayReadyIsTheSnapshot: the ready frame carries the body of getSnapshot.
func TestGatewayReadyIsTheSnapshot(t *testing.T) {
	t.Parallel()
	w := e2etest.GatewayWorld(t)
	var rest any
	w.Must(t, w.Sam, http.MethodGet, "/api/v1/sync/snapshot", "", http.StatusOK, &rest)
	c := e2etest.MustDial(t, w.Env.Server.URL, w.Sam.Token)
	c.Send(`{"op":"hello"}`)
	var ws any
	if err := json.Unmarshal(c.Expect("ready").Snapshot, &ws); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if !reflect.DeepEqual(ws, rest) {
		t.Errorf("ready snapshot %v\ndiffers from getSnapshot %v", ws, rest)
	}
	// Then live events after its head.
	m := w.Post(t, w.Alex, w.TicketThread, "Live for Sam")
	got, _ := c.Until(w.Head(t), false)
	if len(got) != 1 || got[0].Type != "message.created" {
		t.Errorf("live events %+v, want the message %s", got, m.Id)
	}
}

// TestGatewayRevokeWhileConnected: once Alex revoked Sam's grant on Marketing, no event of
// its channel reaches Sam's connection, while Support's still do.
func TestGatewayRevokeWhileConnected(t *testing.T) {
	t.Parallel()
	w := e2etest.GatewayWorld(t)
	c := e2etest.MustDial(t, w.Env.Server.URL, w.Sam.Token)
	c.Send(`{"op":"hello"}`)
	c.Expect("ready")
	w.Post(t, w.Alex, w.CampaignThread, "Before the revoke")

	var grants apigen.GrantList
	w.Must(t, w.Alex, http.MethodGet, "/api/v1/grants?principal_id="+w.Sam.ID.String(), "", http.StatusOK, &grants)
	var marketing uuid.UUID
	for _, g := range grants.Items {
		if g.ResourceId != nil && *g.ResourceId == w.Marketing {
			marketing = g.Id
		}
	}
	if marketing == uuid.Nil {
		t.Fatalf("no grant of Sam on Marketing in %+v", grants.Items)
	}
	w.Must(t, w.Alex, http.MethodDelete, "/api/v1/grants/"+marketing.String(), "", http.StatusNoContent, nil)
	revokedAt := w.Head(t)
	for i := range 3 {
		w.Post(t, w.Alex, w.CampaignThread, fmt.Sprintf("Hidden from Sam %d", i))
		w.Post(t, w.Alex, w.TicketThread, fmt.Sprintf("Seen by Sam %d", i))
	}
	got, _ := c.Until(w.Head(t), false)
	var after []e2etest.GatewayEnvelope
	sawRevoke := false
	for _, e := range got {
		if e.Type == "permissions.changed" {
			sawRevoke = true
		}
		if e.Seq > revokedAt {
			after = append(after, e)
		}
	}
	if !sawRevoke {
		t.Errorf("no permissions.changed among %+v", got)
	}
	if len(after) != 3 {
		t.Errorf("after the revoke Sam got %+v, want the 3 posts in Support", after)
	}
	for _, e := range after {
		if e.ChannelID != w.Tickets {
			t.Errorf("after the revoke Sam got %+v", e)
		}
	}
}

func TestGatewayRefusalsThroughTheRouter(t *testing.T) {
	t.Parallel()
	w := e2etest.GatewayWorld(t)
	for _, tc := range []struct {
		name   string
		token  string
		header []string
		status int
	}{
		{"bad token", "nobody", nil, http.StatusUnauthorized},
		{"cross-site page", w.Sam.Token, []string{"Origin", "https://elsewhere.example.com"}, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, resp, err := e2etest.DialGateway(t, w.Env.Server.URL, tc.token, tc.header...)
			if err == nil {
				t.Fatal("the upgrade was accepted")
			}
			if resp.Status != tc.status || resp.Header.Get("X-Request-Id") == "" {
				t.Errorf("response %+v, want status %d with a request id", resp, tc.status)
			}
		})
	}
	// A browser's auth frame works as the header does.
	c := e2etest.MustDial(t, w.Env.Server.URL, "")
	c.Send(`{"op":"auth","token":"` + w.Robin.Token + `"}`)
	c.Send(`{"op":"hello"}`)
	c.Expect("ready")
}

// TestGatewayRoles: a process with the gateway role alone serves the gateway and the
// operational endpoints, not the API; one with the api role alone serves no gateway.
func TestGatewayRoles(t *testing.T) {
	t.Parallel()
	w := e2etest.NewPeople(t, false)
	url := w.Env.DatabaseURL
	cfg := e2etest.LoadConfig(t, map[config.Key]string{config.DatabaseURL: url})
	build := func(roles ...string) *wire.App {
		app, err := wire.New(t.Context(), cfg, wiretest.TestLogger(t), wire.Options{Roles: roles, Clock: w.Env.Clock})
		if err != nil {
			t.Fatalf("New(%v): %v", roles, err)
		}
		t.Cleanup(app.Close)
		return app
	}
	gw := build(wire.RoleGateway)
	if !gw.ServesHTTP() || gw.Gateway() == nil {
		t.Fatal("a gateway process serves no gateway")
	}
	base, stop, done := e2etest.Serving(t, gw)
	for path, want := range map[string]int{"/healthz": http.StatusOK, "/api/v1/me": http.StatusNotFound} {
		resp, err := e2etest.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s on a gateway process = %d, want %d", path, resp.StatusCode, want)
		}
	}
	c := e2etest.MustDial(t, base, w.Sam.Token)
	c.Send(`{"op":"hello"}`)
	c.Expect("ready")
	stop()
	if code, _ := c.Closed(); code != gateway.CloseGoingAway {
		t.Errorf("close %d on shutdown, want %d", code, gateway.CloseGoingAway)
	}
	if err := e2etest.WaitServe(t, done, e2etest.WaitTimeout); err != nil {
		t.Errorf("Serve: %v", err)
	}

	api := build(wire.RoleAPI)
	if api.Gateway() != nil {
		t.Error("an api process has a gateway")
	}
	srv := serveHandler(t, api)
	_, resp, err := e2etest.DialGateway(t, srv, w.Sam.Token)
	if err == nil || resp.Status != http.StatusNotFound {
		t.Errorf("the gateway of an api process: %v %v, want 404", err, resp)
	}
	if maintenance := build(wire.RoleMaintenance); maintenance.ServesHTTP() {
		t.Error("a maintenance process serves HTTP")
	}
}

// serveHandler serves app.Handler on 127.0.0.1 until the test ends and returns its base URL.
func serveHandler(t *testing.T, app *wire.App) string {
	t.Helper()
	base, _, _ := e2etest.Serving(t, app)
	return base
}

// TestGatewayServeClosesWithGoingAway: when Serve's context ends (SIGTERM), every connection
// gets 1001 after the frames in flight, and resumes elsewhere from its cursor without loss.
func TestGatewayServeClosesWithGoingAway(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	cfg := e2etest.LoadConfig(t, map[config.Key]string{config.DatabaseURL: w.Env.DatabaseURL})
	app, err := wire.New(t.Context(), cfg, wiretest.TestLogger(t), wire.Options{Roles: []string{wire.RoleGateway}, Clock: w.Env.Clock})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(app.Close)
	base, stop, done := e2etest.Serving(t, app)
	c := e2etest.MustDial(t, base, w.Sam.Token)
	c.Send(`{"op":"resume","after":0}`)
	got, _ := c.Until(w.Head(t), true)
	m := w.Post(t, w.Alex, w.TicketThread, "Just before the signal")
	stop()
	code, more := c.Closed()
	if code != gateway.CloseGoingAway {
		t.Errorf("close %d, want %d", code, gateway.CloseGoingAway)
	}
	if err := e2etest.WaitServe(t, done, e2etest.WaitTimeout); err != nil {
		t.Errorf("Serve: %v", err)
	}
	got = append(got, more...)
	cursor := e2etest.GatewaySeqs(got)[len(got)-1]

	// The client resumes on another process (the test's App) from its cursor.
	e2etest.RunTail(t, w.Env.App.Tail())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), e2etest.WaitTimeout)
		defer cancel()
		_ = w.Env.App.Gateway().Shutdown(ctx)
	})
	again := e2etest.MustDial(t, w.Env.Server.URL, w.Sam.Token)
	again.Send(fmt.Sprintf(`{"op":"resume","after":%d}`, cursor))
	rest, _ := again.Until(w.Head(t), true)
	got = append(got, rest...)
	if want := w.RestEvents(t, w.Sam, 0, w.Head(t)); !slices.Equal(e2etest.GatewaySeqs(got), want) {
		t.Errorf("across the shutdown Sam got %v, want %v (message %s)", e2etest.GatewaySeqs(got), want, m.Id)
	}
}

// TestGatewayResumeEpochLikeREST: the resume frame's epoch is judged as ListEvents' epoch
// parameter is, by the one rule of Check: the nil UUID and any other well-formed epoch that
// is not the instance's get resync_required epoch_changed (recovery snapshot) and close 4004,
// as ListEvents answers them 410; a malformed one is a bad frame (4000), as ListEvents
// answers it 400 validation_failed; the current epoch resumes.
func TestGatewayResumeEpochLikeREST(t *testing.T) {
	t.Parallel()
	w := e2etest.GatewayWorld(t)
	head := w.Head(t)
	for _, epoch := range []string{uuid.Nil.String(), uuid.NewString()} {
		r := w.Do(t, w.Sam, http.MethodGet, e2etest.EventsPath(head, 0, epoch), "")
		r.RequireProblem(t, http.StatusGone, "resync_required")
		var g e2etest.GoneBody
		r.JSON(t, &g)
		if g.Reason != "epoch_changed" || g.Recovery != "snapshot" {
			t.Fatalf("listEvents with epoch %s: %s", epoch, r.Body)
		}
		c := e2etest.MustDial(t, w.Env.Server.URL, w.Sam.Token)
		c.Send(fmt.Sprintf(`{"op":"resume","after":%d,"epoch":%q}`, head, epoch))
		var f struct {
			Op       string `json:"op"`
			Reason   string `json:"reason"`
			Recovery string `json:"recovery"`
		}
		if err := json.Unmarshal(c.Expect("resync_required").Raw, &f); err != nil || f.Reason != "epoch_changed" || f.Recovery != "snapshot" {
			t.Fatalf("resume with epoch %s: %+v (%v)", epoch, f, err)
		}
		if code, _ := c.Closed(); code != gateway.CloseResyncRequired {
			t.Fatalf("resume with epoch %s: close %d, want %d", epoch, code, gateway.CloseResyncRequired)
		}
	}

	const malformed = "not-a-uuid"
	w.Do(t, w.Sam, http.MethodGet, e2etest.EventsPath(head, 0, malformed), "").RequireProblem(t, http.StatusBadRequest, "validation_failed")
	c := e2etest.MustDial(t, w.Env.Server.URL, w.Sam.Token)
	c.Send(fmt.Sprintf(`{"op":"resume","after":%d,"epoch":%q}`, head, malformed))
	if code, _ := c.Closed(); code != gateway.CloseBadFrame {
		t.Fatalf("resume with a malformed epoch: close %d, want %d", code, gateway.CloseBadFrame)
	}

	current := e2etest.MustDial(t, w.Env.Server.URL, w.Sam.Token)
	current.Send(fmt.Sprintf(`{"op":"resume","after":%d,"epoch":%q}`, head, w.Epoch(t)))
	if f := current.Expect("catchup.complete"); f.Cursor != head {
		t.Fatalf("resume with the current epoch: catchup.complete at %d, want %d", f.Cursor, head)
	}
}
