package agents

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	agentsapp "bothy.example.com/server/internal/agents/app"
	agentsdomain "bothy.example.com/server/internal/agents/domain"
	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/wiretest"
)

// The runs tests (ADR 0027) drive createRun, getRun, updateRun and
// cancelRun over real HTTP through the validating client, on a SyncWorld with an agent,
// Helper, that is a member of Support (so it may post in the tickets thread and read nothing
// in Marketing).

// runsWorld is a SyncWorld with Helper.
type runsWorld struct {
	*e2etest.SyncWorld
	helper e2etest.Actor
}

func newRunsWorld(t *testing.T, opts ...wiretest.Option) *runsWorld {
	t.Helper()
	w := &runsWorld{SyncWorld: e2etest.NewSyncWorld(t, opts...)}
	w.helper = w.Agent(t, "Helper", "helper")
	w.Grant(t, w.helper, "space", w.Support, "member")
	return w
}

// createRun starts a run as a in the thread with body and wants the status; the run is
// decoded on 201.
func (w *runsWorld) createRun(t *testing.T, a e2etest.Actor, thread uuid.UUID, body string, want int) apigen.Run {
	t.Helper()
	var run apigen.Run
	var out any
	if want == http.StatusCreated {
		out = &run
	}
	w.Must(t, a, http.MethodPost, "/api/v1/threads/"+thread.String()+"/runs", body, want, out)
	return run
}

// updateRun patches a run as a with body and wants the status.
func (w *runsWorld) updateRun(t *testing.T, a e2etest.Actor, run uuid.UUID, body string, want int) apigen.Run {
	t.Helper()
	var out apigen.Run
	var dst any
	if want == http.StatusOK {
		dst = &out
	}
	w.Must(t, a, http.MethodPatch, "/api/v1/runs/"+run.String(), body, want, dst)
	return out
}

// cancelRun cancels a run as a and wants the status.
func (w *runsWorld) cancelRun(t *testing.T, a e2etest.Actor, run uuid.UUID, want int) apigen.Run {
	t.Helper()
	var out apigen.Run
	var dst any
	if want == http.StatusOK {
		dst = &out
	}
	w.Must(t, a, http.MethodPost, "/api/v1/runs/"+run.String()+"/cancel", "", want, dst)
	return out
}

// problemFields returns the field names a validation problem lists.
func problemFields(t *testing.T, body []byte) []string {
	t.Helper()
	var p struct {
		Code   string `json:"code"`
		Errors []struct {
			Field string `json:"field"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("problem body %s: %v", body, err)
	}
	out := []string{}
	for _, e := range p.Errors {
		out = append(out, e.Field)
	}
	slices.Sort(out)
	return out
}

// TestRunLifecycle: an agent starts a run for a reader of the thread, reports progress and
// finishes it; each answer is the run as stored, getRun answers the thread's readers alone,
// and absent ids and times are omitted, never null (the validating client checks that too).
func TestRunLifecycle(t *testing.T) {
	t.Parallel()
	w := newRunsWorld(t)
	requested := fmt.Sprintf(`{"requested_by":%q}`, w.Alex.ID)
	run := w.createRun(t, w.helper, w.TicketThread, requested, http.StatusCreated)
	if run.State != apigen.RunStateQueued || run.Version != 1 || run.AgentId != w.helper.ID || run.RequestedBy != w.Alex.ID ||
		run.ThreadId != w.TicketThread || run.ChannelId != w.Tickets || run.SpaceId == nil || *run.SpaceId != w.Support ||
		run.Progress != "" || run.InvocationId != nil || run.EndedAt != nil || run.CancelledBy != nil {
		t.Fatalf("new run = %+v", run)
	}
	raw := w.Must(t, w.Sam, http.MethodGet, "/api/v1/runs/"+run.Id.String(), "", http.StatusOK, nil)
	for _, absent := range []string{"invocation_id", "ended_at", "cancelled_by"} {
		if strings.Contains(string(raw.Body), `"`+absent+`"`) {
			t.Fatalf("getRun of a new run names %s: %s", absent, raw.Body)
		}
	}
	w.Must(t, w.Robin, http.MethodGet, "/api/v1/runs/"+run.Id.String(), "", http.StatusNotFound, nil)
	w.Must(t, w.Alex, http.MethodGet, "/api/v1/runs/"+uuid.NewString(), "", http.StatusNotFound, nil)

	running := w.updateRun(t, w.helper, run.Id, `{"state":"running","progress":"  Reading the thread "}`, http.StatusOK)
	if running.State != apigen.RunStateRunning || running.Progress != "Reading the thread" || running.Version != 2 {
		t.Fatalf("running run = %+v", running)
	}
	same := w.updateRun(t, w.helper, run.Id, `{"state":"running"}`, http.StatusOK)
	if same.Progress != "Reading the thread" || same.Version != 3 {
		t.Fatalf("a state without progress keeps the progress: %+v", same)
	}
	done := w.updateRun(t, w.helper, run.Id, `{"state":"succeeded","progress":"Answered"}`, http.StatusOK)
	if done.State != apigen.RunStateSucceeded || done.Version != 4 || done.EndedAt == nil || done.CancelledBy != nil {
		t.Fatalf("finished run = %+v", done)
	}
	var got apigen.Run
	w.Must(t, w.Alex, http.MethodGet, "/api/v1/runs/"+run.Id.String(), "", http.StatusOK, &got)
	if got.Version != 4 || got.State != apigen.RunStateSucceeded || got.Progress != "Answered" {
		t.Fatalf("getRun after the end = %+v", got)
	}

	// A finished run is immutable: 409 for every change, the run unchanged.
	for _, body := range []string{`{"state":"running"}`, `{"state":"succeeded","progress":"again"}`, `{"state":"cancelled"}`} {
		w.updateRun(t, w.helper, run.Id, body, http.StatusConflict)
	}
	w.cancelRun(t, w.Alex, run.Id, http.StatusConflict)
	w.Must(t, w.Alex, http.MethodGet, "/api/v1/runs/"+run.Id.String(), "", http.StatusOK, &got)
	if got.Version != 4 {
		t.Fatalf("a refused change moved the run to version %d", got.Version)
	}

	// A run may start running and carry an invocation id: one of Alex's mentions of Helper.
	before := w.Head(t)
	w.Post(t, w.Alex, w.TicketThread, "@helper the printer again")
	var inv uuid.UUID
	for _, e := range w.EventsAfter(t, before) {
		if e.Type == "invocation.requested" {
			var p struct {
				ID uuid.UUID `json:"id"`
			}
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatalf("invocation payload: %v", err)
			}
			inv = p.ID
		}
	}
	started := w.createRun(t, w.helper, w.TicketThread,
		fmt.Sprintf(`{"requested_by":%q,"state":"running","progress":"On it","invocation_id":%q}`, w.Sam.ID, inv), http.StatusCreated)
	if started.State != apigen.RunStateRunning || started.Progress != "On it" || started.InvocationId == nil || *started.InvocationId != inv {
		t.Fatalf("started run = %+v", started)
	}
	failed := w.updateRun(t, w.helper, started.Id, `{"state":"failed","progress":"The printer API is down"}`, http.StatusOK)
	if failed.State != apigen.RunStateFailed || failed.EndedAt == nil {
		t.Fatalf("failed run = %+v", failed)
	}
}

// TestRunTransitions: the state machine of ADR 0027 over HTTP; an edge it lacks is 409 and
// leaves the run as it was.
func TestRunTransitions(t *testing.T) {
	t.Parallel()
	w := newRunsWorld(t)
	requested := fmt.Sprintf(`{"requested_by":%q}`, w.Sam.ID)
	tests := []struct {
		name  string
		path  []string // states the run is moved through first, each allowed
		to    string
		want  int
		final string
	}{
		{"queued to succeeded skips running", nil, "succeeded", http.StatusConflict, "queued"},
		{"queued to failed skips running", nil, "failed", http.StatusConflict, "queued"},
		{"running back to queued", []string{"running"}, "queued", http.StatusConflict, "running"},
		{"queued to cancelled", nil, "cancelled", http.StatusOK, "cancelled"},
		{"running to cancelled", []string{"running"}, "cancelled", http.StatusOK, "cancelled"},
		{"cancelled to running", []string{"cancelled"}, "running", http.StatusConflict, "cancelled"},
		{"failed to succeeded", []string{"running", "failed"}, "succeeded", http.StatusConflict, "failed"},
		{"an unknown state", nil, "paused", http.StatusBadRequest, "queued"},
	}
	for _, tc := range tests {
		run := w.createRun(t, w.helper, w.TicketThread, requested, http.StatusCreated)
		for _, s := range tc.path {
			w.updateRun(t, w.helper, run.Id, fmt.Sprintf(`{"state":%q}`, s), http.StatusOK)
		}
		r := w.Do(t, w.helper, http.MethodPatch, "/api/v1/runs/"+run.Id.String(), fmt.Sprintf(`{"state":%q}`, tc.to))
		if r.Status != tc.want {
			t.Fatalf("%s: updateRun = %d, want %d; body %s", tc.name, r.Status, tc.want, r.Body)
		}
		var got apigen.Run
		w.Must(t, w.helper, http.MethodGet, "/api/v1/runs/"+run.Id.String(), "", http.StatusOK, &got)
		if string(got.State) != tc.final {
			t.Fatalf("%s: the run is %s, want %s", tc.name, got.State, tc.final)
		}
	}
}

// TestRunRefusals: who may start, update and cancel a run, and what is refused as invalid.
func TestRunRefusals(t *testing.T) {
	t.Parallel()
	w := newRunsWorld(t)
	forAlex := fmt.Sprintf(`{"requested_by":%q}`, w.Alex.ID)

	// Only agents start runs, only where they may post; a thread one cannot read is 404.
	w.createRun(t, w.Alex, w.TicketThread, forAlex, http.StatusForbidden)
	w.createRun(t, w.Owner, w.TicketThread, forAlex, http.StatusForbidden)
	w.createRun(t, w.Robin, w.TicketThread, forAlex, http.StatusNotFound)
	w.createRun(t, w.helper, w.CampaignThread, fmt.Sprintf(`{"requested_by":%q}`, w.Sam.ID), http.StatusNotFound)
	w.createRun(t, w.helper, uuid.New(), forAlex, http.StatusNotFound)
	viewer := w.Agent(t, "Viewer", "viewer")
	w.Grant(t, viewer, "space", w.Support, "viewer")
	w.createRun(t, viewer, w.TicketThread, forAlex, http.StatusForbidden)

	// requested_by must be a person who may read the thread; every invalid field is named.
	for _, tc := range []struct {
		name, body string
		fields     []string
	}{
		{"a person who cannot read the thread", fmt.Sprintf(`{"requested_by":%q}`, w.Robin.ID), []string{"requested_by"}},
		{"an agent", fmt.Sprintf(`{"requested_by":%q}`, w.helper.ID), []string{"requested_by"}},
		{"nobody", fmt.Sprintf(`{"requested_by":%q}`, uuid.New()), []string{"requested_by"}},
		{"a progress text over agents.run_progress_max_length", fmt.Sprintf(`{"requested_by":%q,"progress":%q}`, w.Alex.ID, strings.Repeat("a", 1001)), []string{"progress"}},
		{"a final start state", fmt.Sprintf(`{"requested_by":%q,"state":"succeeded"}`, w.Alex.ID), []string{"state"}},
		{"everything at once", fmt.Sprintf(`{"requested_by":%q,"progress":"bell\u0007"}`, w.Robin.ID), []string{"progress", "requested_by"}},
	} {
		r := w.Do(t, w.helper, http.MethodPost, "/api/v1/threads/"+w.TicketThread.String()+"/runs", tc.body)
		if r.Status != http.StatusBadRequest {
			t.Fatalf("%s: createRun = %d, want 400; body %s", tc.name, r.Status, r.Body)
		}
		if got := problemFields(t, r.Body); !slices.Equal(got, tc.fields) {
			t.Fatalf("%s: the problem names %v, want %v", tc.name, got, tc.fields)
		}
	}
	w.createRun(t, w.helper, w.TicketThread, fmt.Sprintf(`{"requested_by":%q,"progress":%q}`, w.Alex.ID, strings.Repeat("é", 1000)), http.StatusCreated)

	// Only the run's agent updates it; whoever cannot read the thread gets 404.
	run := w.createRun(t, w.helper, w.TicketThread, forAlex, http.StatusCreated)
	other := w.Agent(t, "Other", "other")
	w.Grant(t, other, "space", w.Support, "member")
	w.updateRun(t, w.Alex, run.Id, `{"state":"running"}`, http.StatusForbidden)
	w.updateRun(t, other, run.Id, `{"state":"running"}`, http.StatusForbidden)
	w.updateRun(t, w.Owner, run.Id, `{"state":"running"}`, http.StatusForbidden)
	w.updateRun(t, w.Robin, run.Id, `{"state":"running"}`, http.StatusNotFound)
	w.updateRun(t, w.helper, uuid.New(), `{"state":"running"}`, http.StatusNotFound)
	r := w.Do(t, w.helper, http.MethodPatch, "/api/v1/runs/"+run.Id.String(), fmt.Sprintf(`{"state":"running","progress":%q}`, strings.Repeat("a", 1001)))
	if r.Status != http.StatusBadRequest || !slices.Equal(problemFields(t, r.Body), []string{"progress"}) {
		t.Fatalf("updateRun with a long progress = %d %s, want 400 naming progress", r.Status, r.Body)
	}

	// Cancelling: a reader who is neither the requester nor a manager of the channel gets 403
	// (Sam reads Support as a member), whoever cannot read the thread 404, the agent itself 403
	// (it moves its run with updateRun); the requester may.
	w.cancelRun(t, w.Sam, run.Id, http.StatusForbidden)
	w.cancelRun(t, w.Robin, run.Id, http.StatusNotFound)
	w.cancelRun(t, w.helper, run.Id, http.StatusForbidden)
	w.cancelRun(t, w.Alex, uuid.New(), http.StatusNotFound)
	cancelled := w.cancelRun(t, w.Alex, run.Id, http.StatusOK)
	if cancelled.State != apigen.RunStateCancelled || cancelled.CancelledBy == nil || *cancelled.CancelledBy != w.Alex.ID || cancelled.EndedAt == nil {
		t.Fatalf("cancelled run = %+v", cancelled)
	}

	// A manager of the channel cancels anyone's run: an admin of the space and the owner.
	w.Grant(t, w.Sam, "channel", w.Tickets, "admin")
	second := w.createRun(t, w.helper, w.TicketThread, forAlex, http.StatusCreated)
	if c := w.cancelRun(t, w.Sam, second.Id, http.StatusOK); *c.CancelledBy != w.Sam.ID {
		t.Fatalf("cancelled by %v, want Sam", c.CancelledBy)
	}
	third := w.createRun(t, w.helper, w.TicketThread, forAlex, http.StatusCreated)
	w.cancelRun(t, w.Owner, third.Id, http.StatusOK)

	// Nobody posts in an archived channel, so no run starts there (409); a run in progress
	// there may still be ended.
	archivedRun := w.createRun(t, w.helper, w.TicketThread, forAlex, http.StatusCreated)
	w.Must(t, w.Owner, http.MethodPost, "/api/v1/channels/"+w.Tickets.String()+"/archive", "", http.StatusOK, nil)
	w.createRun(t, w.helper, w.TicketThread, forAlex, http.StatusConflict)
	w.updateRun(t, w.helper, archivedRun.Id, `{"state":"running"}`, http.StatusOK)
	w.cancelRun(t, w.Alex, archivedRun.Id, http.StatusOK)

	// A requester who lost the thread cannot reach the run any more.
	otherTickets := w.Channel(t, w.Owner, w.Support, "tickets-2")
	fourth := w.createRun(t, w.helper, w.Thread(t, w.Owner, otherTickets, "The scanner too").Id, forAlex, http.StatusCreated)
	w.Revoke(t, w.AlexSupport)
	w.cancelRun(t, w.Alex, fourth.Id, http.StatusNotFound)
}

// TestRunEventsReachThreadReaders: run.created and run.updated are thread events, delivered by
// catch-up to whoever may read the thread and to nobody else (Robin; the owner for a direct
// message it does not take part in), and the snapshot's active_runs is exactly the runs in
// progress in the threads its reader may read.
func TestRunEventsReachThreadReaders(t *testing.T) {
	t.Parallel()
	w := newRunsWorld(t)
	after := w.Head(t)
	dm := w.DM(t, w.Alex, w.helper)
	dmThread := w.Thread(t, w.Alex, dm, "@helper can you summarise the tickets?").Id

	inTickets := w.createRun(t, w.helper, w.TicketThread, fmt.Sprintf(`{"requested_by":%q}`, w.Sam.ID), http.StatusCreated)
	inDM := w.createRun(t, w.helper, dmThread, fmt.Sprintf(`{"requested_by":%q,"state":"running"}`, w.Alex.ID), http.StatusCreated)
	finished := w.createRun(t, w.helper, w.TicketThread, fmt.Sprintf(`{"requested_by":%q}`, w.Alex.ID), http.StatusCreated)
	w.updateRun(t, w.helper, inTickets.Id, `{"state":"running","progress":"Counting tickets"}`, http.StatusOK)
	w.cancelRun(t, w.Alex, finished.Id, http.StatusOK)

	runEvents := func(a e2etest.Actor) map[string][]uuid.UUID {
		events, _ := w.CatchUp(t, a, after, 0)
		out := map[string][]uuid.UUID{}
		for _, e := range events {
			if !strings.HasPrefix(e.Type, "run.") {
				continue
			}
			var p struct {
				RunID    uuid.UUID `json:"run_id"`
				ThreadID uuid.UUID `json:"thread_id"`
			}
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			if e.Resource.Kind != "thread" || e.Resource.ID != p.ThreadID || e.ThreadID == nil || *e.ThreadID != p.ThreadID {
				t.Fatalf("%s %d is not placed on its thread: %+v", e.Type, e.Seq, e)
			}
			out[e.Type] = append(out[e.Type], p.RunID)
		}
		return out
	}
	want := func(who string, got map[string][]uuid.UUID, created, updated []uuid.UUID) {
		t.Helper()
		if !slices.Equal(got["run.created"], created) || !slices.Equal(got["run.updated"], updated) {
			t.Fatalf("%s received run.created %v and run.updated %v; want %v and %v", who, got["run.created"], got["run.updated"], created, updated)
		}
	}
	want("Alex", runEvents(w.Alex), []uuid.UUID{inTickets.Id, inDM.Id, finished.Id}, []uuid.UUID{inTickets.Id, finished.Id})
	want("Sam", runEvents(w.Sam), []uuid.UUID{inTickets.Id, finished.Id}, []uuid.UUID{inTickets.Id, finished.Id})
	want("the owner", runEvents(w.Owner), []uuid.UUID{inTickets.Id, finished.Id}, []uuid.UUID{inTickets.Id, finished.Id})
	want("Helper", runEvents(w.helper), []uuid.UUID{inTickets.Id, inDM.Id, finished.Id}, []uuid.UUID{inTickets.Id, finished.Id})
	want("Robin", runEvents(w.Robin), nil, nil)

	active := func(a e2etest.Actor) []uuid.UUID {
		s, _ := w.Snapshot(t, a)
		out := []uuid.UUID{}
		for _, r := range s.ActiveRuns {
			out = append(out, r.Id)
		}
		return out
	}
	for _, tc := range []struct {
		who  e2etest.Actor
		want []uuid.UUID
	}{
		{w.Alex, []uuid.UUID{inTickets.Id, inDM.Id}},
		{w.Sam, []uuid.UUID{inTickets.Id}},
		{w.Owner, []uuid.UUID{inTickets.Id}},
		{w.helper, []uuid.UUID{inTickets.Id, inDM.Id}},
		{w.Robin, []uuid.UUID{}},
	} {
		if got := active(tc.who); !slices.Equal(got, tc.want) {
			t.Fatalf("%s's active_runs = %v, want %v", tc.who.Name, got, tc.want)
		}
	}
	s, _ := w.Snapshot(t, w.Sam)
	r := s.ActiveRuns[0]
	if r.State != apigen.RunStateRunning || r.Progress != "Counting tickets" || r.Version != 2 || r.RequestedBy != w.Sam.ID ||
		r.ChannelId != w.Tickets || r.ThreadId != w.TicketThread || r.AgentId != w.helper.ID || r.InvocationId != nil {
		t.Fatalf("Sam's active run = %+v", r)
	}
}

// TestRunStaleExpiry (ADR 0032): with the fake clock moved past agents.run_stale_after, the
// sweeper's run expiry ends the queued and running runs nobody updated since as failed with
// the expiry's progress text, at most agents.run_expiry_batch per sweep, each with a
// run.updated by the system that reaches the thread's readers; the snapshot's active_runs no
// longer lists them and the agent can no longer change them. A run updated within the key is
// untouched.
func TestRunStaleExpiry(t *testing.T) {
	t.Parallel()
	w := newRunsWorld(t,
		wiretest.WithSetting(agentsapp.KeyRunStaleAfter, "10m"),
		wiretest.WithSetting(agentsapp.KeyRunExpiryBatch, "1"))
	requested := fmt.Sprintf(`{"requested_by":%q}`, w.Sam.ID)
	queued := w.createRun(t, w.helper, w.TicketThread, requested, http.StatusCreated)
	running := w.createRun(t, w.helper, w.TicketThread, fmt.Sprintf(`{"requested_by":%q,"state":"running","progress":"Reading"}`, w.Sam.ID), http.StatusCreated)
	kept := w.createRun(t, w.helper, w.TicketThread, requested, http.StatusCreated)
	after := w.Head(t)

	w.Env.Clock.Advance(6 * time.Minute)
	kept = w.updateRun(t, w.helper, kept.Id, `{"state":"running","progress":"Still at it"}`, http.StatusOK)
	w.Env.Clock.Advance(4 * time.Minute)
	if n, err := w.Env.App.ExpireRuns(t.Context()); err != nil || n != 0 {
		t.Fatalf("ExpireRuns at agents.run_stale_after = %d, %v; want 0 (not past it yet)", n, err)
	}
	w.Env.Clock.Advance(time.Second)
	for _, want := range []int{1, 1, 0} {
		if n, err := w.Env.App.ExpireRuns(t.Context()); err != nil || n != want {
			t.Fatalf("ExpireRuns = %d, %v; want %d (agents.run_expiry_batch a sweep)", n, err, want)
		}
	}

	var inst apigen.InstanceInfo
	w.Must(t, w.Sam, http.MethodGet, "/api/v1/instance", "", http.StatusOK, &inst)
	events, _ := w.CatchUp(t, w.Sam, after, 0)
	var expired []uuid.UUID
	for _, e := range events {
		if e.Type != "run.updated" {
			continue
		}
		var p apigen.Run
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		var run struct {
			RunID uuid.UUID `json:"run_id"`
		}
		if err := json.Unmarshal(e.Payload, &run); err != nil {
			t.Fatal(err)
		}
		if run.RunID == kept.Id {
			continue
		}
		if e.Actor == nil || e.Actor.Kind != "system" || e.Actor.ID != inst.Id || p.State != apigen.RunStateFailed ||
			p.Progress != agentsdomain.ExpiredProgress || p.EndedAt == nil {
			t.Fatalf("expiry event %d: actor %+v, payload %s", e.Seq, e.Actor, e.Payload)
		}
		expired = append(expired, run.RunID)
	}
	if want := []uuid.UUID{queued.Id, running.Id}; !slices.Equal(expired, want) {
		t.Fatalf("Sam received the expiry of %v, want %v", expired, want)
	}

	s, _ := w.Snapshot(t, w.Sam)
	if len(s.ActiveRuns) != 1 || s.ActiveRuns[0].Id != kept.Id || s.ActiveRuns[0].Version != kept.Version {
		t.Fatalf("Sam's active_runs after the expiry = %+v, want only %s as it was", s.ActiveRuns, kept.Id)
	}
	for _, id := range []uuid.UUID{queued.Id, running.Id} {
		var got apigen.Run
		w.Must(t, w.Sam, http.MethodGet, "/api/v1/runs/"+id.String(), "", http.StatusOK, &got)
		if got.State != apigen.RunStateFailed || got.Progress != agentsdomain.ExpiredProgress || got.EndedAt == nil {
			t.Fatalf("getRun of an expired run = %+v", got)
		}
		w.updateRun(t, w.helper, id, `{"state":"succeeded"}`, http.StatusConflict)
	}

	// Past the key for the kept run too: it expires on the next sweep.
	w.Env.Clock.Advance(10 * time.Minute)
	if n, err := w.Env.App.ExpireRuns(t.Context()); err != nil || n != 1 {
		t.Fatalf("ExpireRuns for the kept run = %d, %v; want 1", n, err)
	}
	if s, _ := w.Snapshot(t, w.Sam); len(s.ActiveRuns) != 0 {
		t.Fatalf("active_runs = %+v, want none", s.ActiveRuns)
	}
}
