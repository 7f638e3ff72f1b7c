package consumers

import (
	"net/http"
	"strings"
	"testing"
	"time"

	agentsapp "bothy.example.com/server/internal/agents/app"
	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	syncdomain "bothy.example.com/server/internal/sync/domain"
	"bothy.example.com/server/internal/wiretest"
)

// The presence tests (spec 03 "Presence") drive heartbeats over real HTTP and the
// sweeper through App.SweepPresence, with the wired App's fake clock: the thresholds are
// short, the event interval long, so every rule shows within a few clock moves.

// presenceWorld is a ChatWorld with Robin an agent, idle after 10s, offline after 20s, and at
// most one presence event per agent per minute.
func presenceWorld(t *testing.T) *e2etest.ChatWorld {
	t.Helper()
	return e2etest.NewChatWorld(t, true,
		wiretest.WithSetting(agentsapp.KeyPresenceIdleAfter, "10s"),
		wiretest.WithSetting(agentsapp.KeyPresenceOfflineAfter, "20s"),
		wiretest.WithSetting(agentsapp.KeyPresenceMinInterval, "1m"),
		wiretest.WithSetting(agentsapp.KeyMaxBillingModeLength, "16"))
}

// heartbeat sends Robin's heartbeat with body ("" for none) and returns the answer.
func heartbeat(t *testing.T, w *e2etest.ChatWorld, a e2etest.Actor, body string, want int) apigen.AgentHeartbeat {
	t.Helper()
	var hb apigen.AgentHeartbeat
	var out any
	if want == http.StatusOK {
		out = &hb
	}
	w.Must(t, a, http.MethodPost, "/api/v1/agents/me/heartbeat", body, want, out)
	return hb
}

// sweep runs one presence sweep and checks how many events it appended.
func sweep(t *testing.T, w *e2etest.ChatWorld, want int) {
	t.Helper()
	n, err := w.Env.App.SweepPresence(t.Context())
	if err != nil {
		t.Fatalf("SweepPresence: %v", err)
	}
	if n != want {
		t.Fatalf("SweepPresence appended %d events, want %d", n, want)
	}
}

// presenceEvents are the agent.presence_changed events after seq, as stored.
func presenceEvents(t *testing.T, w *e2etest.ChatWorld, after int64) []syncdomain.StoredEvent {
	t.Helper()
	return e2etest.StoredWhere(w.EventsAfter(t, after), func(e syncdomain.StoredEvent) bool { return e.Type == "agent.presence_changed" })
}

// robinInSnapshot is Robin's entry in a's snapshot.
func robinInSnapshot(t *testing.T, w *e2etest.ChatWorld, a e2etest.Actor) apigen.AgentPresence {
	t.Helper()
	var s apigen.Snapshot
	w.Must(t, a, http.MethodGet, "/api/v1/sync/snapshot", "", http.StatusOK, &s)
	for _, ag := range s.Agents {
		if ag.Agent.Id == w.Robin.ID {
			return ag
		}
	}
	t.Fatalf("Robin is not among the agents of %s's snapshot: %+v", a.Name, s.Agents)
	return apigen.AgentPresence{}
}

// TestPresenceHeartbeatAndSweep: unknown before any heartbeat; a heartbeat makes Robin online
// at once (the first announcement is never held back); silence makes it idle, then offline,
// each announced by the sweeper with the clock's time; the snapshot reports the announced
// state and billing mode; people and apps send no heartbeats (agents/me is no agent: 404).
func TestPresenceHeartbeatAndSweep(t *testing.T) {
	t.Parallel()
	w := presenceWorld(t)
	if got := robinInSnapshot(t, w, w.Sam); got.State != apigen.AgentRuntimeStateUnknown {
		t.Fatalf("Robin before any heartbeat: %s, want unknown", got.State)
	}
	heartbeat(t, w, w.Sam, "", http.StatusNotFound)
	heartbeat(t, w, w.Robin, `{"reported_billing_mode":"`+strings.Repeat("x", 17)+`"}`, http.StatusBadRequest)
	heartbeat(t, w, w.Robin, `{"reported_billing_mode":"a\u0007b"}`, http.StatusBadRequest)
	start := w.Head(t)

	hb := heartbeat(t, w, w.Robin, `{"reported_billing_mode":"subscription"}`, http.StatusOK)
	if hb.State != apigen.AgentRuntimeStateOnline || hb.ReportedBillingMode == nil || *hb.ReportedBillingMode != "subscription" {
		t.Fatalf("heartbeat answered %+v, want online with billing mode subscription", hb)
	}
	evs := presenceEvents(t, w, start)
	if len(evs) != 1 || evs[0].ResourceID != w.Robin.ID || evs[0].ActorID != w.Robin.ID {
		t.Fatalf("after the first heartbeat: %s, want one agent.presence_changed of Robin by Robin", e2etest.Describe(evs))
	}
	e2etest.RequirePayload(t, evs[0], map[string]any{
		"agent_id": w.Robin.ID.String(), "state": "online", "reported_billing_mode": "subscription",
		"last_heartbeat_at": hb.LastHeartbeatAt.Format(time.RFC3339Nano),
	})
	if got := robinInSnapshot(t, w, w.Sam); got.State != apigen.AgentRuntimeStateOnline || got.ReportedBillingMode == nil || *got.ReportedBillingMode != "subscription" {
		t.Fatalf("Sam's snapshot after the heartbeat: %+v, want online, subscription", got)
	}
	// Sam receives the event through catch-up (agent.read: everyone who may read Robin).
	if seqs := w.RestEvents(t, w.Sam, start, w.Head(t)); len(seqs) != 1 || seqs[0] != evs[0].Seq {
		t.Fatalf("Sam's catch-up after the heartbeat: %v, want [%d]", seqs, evs[0].Seq)
	}

	w.Env.Clock.Advance(5 * time.Second)
	heartbeat(t, w, w.Robin, "", http.StatusOK) // still online: nothing to announce
	sweep(t, w, 0)
	w.Env.Clock.Advance(70 * time.Second) // idle after 10s, offline after 20s of silence
	sweep(t, w, 1)
	sweep(t, w, 0) // nothing changed since
	evs = presenceEvents(t, w, start)
	if len(evs) != 2 {
		t.Fatalf("after the silence: %s, want two presence events", e2etest.Describe(evs))
	}
	e2etest.RequirePayload(t, evs[1], map[string]any{
		"agent_id": w.Robin.ID.String(), "state": "offline", "reported_billing_mode": "subscription",
		"last_heartbeat_at": hb.LastHeartbeatAt.Add(5 * time.Second).Format(time.RFC3339Nano),
	})
	if evs[1].ActorID == w.Robin.ID {
		t.Fatal("the sweeper's event names Robin as its actor, want the system")
	}
	if got := robinInSnapshot(t, w, w.Sam); got.State != apigen.AgentRuntimeStateOffline {
		t.Fatalf("Sam's snapshot after the silence: %s, want offline", got.State)
	}
	app := w.App(t, "Relay", "relay", "agents:read")
	heartbeat(t, w, app, "", http.StatusNotFound)
}

// TestPresenceEventRate: whatever Robin does, at most one agent.presence_changed per
// agents.presence_min_interval; a change held back is announced by the sweeper once the
// interval has passed, with the state of that moment, and one that undid itself meanwhile is
// not announced at all.
func TestPresenceEventRate(t *testing.T) {
	t.Parallel()
	w := presenceWorld(t)
	start := w.Head(t)
	heartbeat(t, w, w.Robin, "", http.StatusOK) // t=0: online, announced
	w.Env.Clock.Advance(11 * time.Second)       // t=11: idle, inside the minute
	sweep(t, w, 0)
	w.Env.Clock.Advance(10 * time.Second) // t=21: offline, inside the minute
	sweep(t, w, 0)
	heartbeat(t, w, w.Robin, `{"reported_billing_mode":"metered"}`, http.StatusOK) // t=21: online again, a new mode
	w.Env.Clock.Advance(20 * time.Second)                                          // t=41: idle
	last := heartbeat(t, w, w.Robin, "", http.StatusOK)                            // online
	if evs := presenceEvents(t, w, start); len(evs) != 1 {
		t.Fatalf("inside the first minute: %s, want only the first announcement", e2etest.Describe(evs))
	}
	if got := robinInSnapshot(t, w, w.Sam); got.State != apigen.AgentRuntimeStateOnline || got.ReportedBillingMode != nil {
		t.Fatalf("Sam's snapshot inside the minute: %+v, want the announced online without a billing mode", got)
	}
	w.Env.Clock.Advance(19 * time.Second) // t=60: the minute has passed; idle (heartbeat at 41)
	sweep(t, w, 1)                        // idle, with the new billing mode
	evs := presenceEvents(t, w, start)
	if len(evs) != 2 {
		t.Fatalf("after the minute: %s, want two announcements", e2etest.Describe(evs))
	}
	e2etest.RequirePayload(t, evs[1], map[string]any{
		"agent_id": w.Robin.ID.String(), "state": "idle", "reported_billing_mode": "metered",
		"last_heartbeat_at": last.LastHeartbeatAt.Format(time.RFC3339Nano),
	})
	w.Env.Clock.Advance(time.Second) // t=61: inside the new minute
	sweep(t, w, 0)
	w.Env.Clock.Advance(time.Minute) // t=121: offline since t=61, the minute passed
	sweep(t, w, 1)
	if got := robinInSnapshot(t, w, w.Sam); got.State != apigen.AgentRuntimeStateOffline || got.ReportedBillingMode == nil || *got.ReportedBillingMode != "metered" {
		t.Fatalf("Sam's snapshot at the end: %+v, want offline, metered", got)
	}
}

// TestPresenceGatewayHeartbeat: an agent's heartbeat frame (spec 03, "Presence") is recorded
// as sendAgentHeartbeat records one: Robin's first frame makes it online at once, with its
// billing mode, in Sam's snapshot and as agent.presence_changed on Robin's own connection; a
// change inside agents.presence_min_interval is held back, and the next frame after it is
// announced. A person's heartbeat frame is a bad frame (validation_failed, close 4000).
func TestPresenceGatewayHeartbeat(t *testing.T) {
	t.Parallel()
	w := presenceWorld(t)
	e2etest.ServeLive(t, w)
	start := w.Head(t)
	c := e2etest.MustDial(t, w.Env.Server.URL, w.Robin.Token)
	c.Send(`{"op":"hello"}`)
	c.Expect("ready")

	c.Send(`{"op":"heartbeat","reported_billing_mode":"subscription"}`)
	got := c.PresenceChanged()
	evs := presenceEvents(t, w, start)
	if len(evs) != 1 || evs[0].Seq != got.Seq || evs[0].ActorID != w.Robin.ID {
		t.Fatalf("after the heartbeat frame: stored %s, the gateway delivered seq %d; want one event of Robin", e2etest.Describe(evs), got.Seq)
	}
	e2etest.RequirePayload(t, evs[0], map[string]any{
		"agent_id": w.Robin.ID.String(), "state": "online", "reported_billing_mode": "subscription",
		"last_heartbeat_at": w.Env.Clock.Now().UTC().Format(time.RFC3339Nano),
	})
	if p := robinInSnapshot(t, w, w.Sam); p.State != apigen.AgentRuntimeStateOnline || p.ReportedBillingMode == nil || *p.ReportedBillingMode != "subscription" {
		t.Fatalf("Sam's snapshot after Robin's heartbeat frame: %+v, want online, subscription", p)
	}

	// Inside the minute a new billing mode is recorded but not announced.
	w.Env.Clock.Advance(11 * time.Second)
	c.Send(`{"op":"heartbeat","reported_billing_mode":"metered"}`)
	c.Send(`{"op":"ping"}`)
	c.ExpectPong()
	if evs := presenceEvents(t, w, start); len(evs) != 1 {
		t.Fatalf("a heartbeat frame inside agents.presence_min_interval: %s, want no new event", e2etest.Describe(evs))
	}
	if p := robinInSnapshot(t, w, w.Sam); p.ReportedBillingMode == nil || *p.ReportedBillingMode != "subscription" {
		t.Fatalf("Sam's snapshot inside the minute: %+v, want the announced subscription", p)
	}
	// Once the minute has passed, the next frame announces the change at once.
	w.Env.Clock.Advance(time.Minute)
	c.Send(`{"op":"heartbeat"}`)
	got = c.PresenceChanged()
	evs = presenceEvents(t, w, start)
	if len(evs) != 2 || evs[1].Seq != got.Seq {
		t.Fatalf("after the minute: stored %s, delivered seq %d; want a second event", e2etest.Describe(evs), got.Seq)
	}
	e2etest.RequirePayload(t, evs[1], map[string]any{
		"agent_id": w.Robin.ID.String(), "state": "online", "reported_billing_mode": "metered",
		"last_heartbeat_at": w.Env.Clock.Now().UTC().Format(time.RFC3339Nano),
	})

	person := e2etest.MustDial(t, w.Env.Server.URL, w.Sam.Token)
	person.Send(`{"op":"hello"}`)
	person.Expect("ready")
	person.Send(`{"op":"heartbeat"}`)
	if f := person.Expect("error"); f.Code != "validation_failed" {
		t.Fatalf("a person's heartbeat frame answered %s, want validation_failed", f.Raw)
	}
	if code, _ := person.Closed(); code != gateway.CloseBadFrame {
		t.Fatalf("a person's heartbeat frame closed with %d, want %d", code, gateway.CloseBadFrame)
	}
	if evs := presenceEvents(t, w, start); len(evs) != 2 {
		t.Fatalf("after Sam's heartbeat frame: %s, want still two events", e2etest.Describe(evs))
	}
}
