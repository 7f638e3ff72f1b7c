package agents

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	agentsapp "bothy.example.com/server/internal/agents/app"
	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
	syncdomain "bothy.example.com/server/internal/sync/domain"
	"bothy.example.com/server/internal/wiretest"
)

// The invocation tests (ADR 0031) drive the wired App over real HTTP and
// real WebSockets with its fake clock: Alex (the owner) invokes Robin, an agent and member
// of Support, by mentioning it in the tickets thread; Sam, a viewer of Support, reads the
// same thread and must never see an invocation. Acknowledgements time out after 10s and an
// invocation is delivered at most 3 times.

// invocationWorld is a ChatWorld whose Robin is an agent member of Support, with the tail
// running for the gateway; RobinSupport is Robin's grant.
type invocationWorld struct {
	*e2etest.ChatWorld
	robinSupport uuid.UUID
}

func newInvocationWorld(t *testing.T) *invocationWorld {
	t.Helper()
	w := e2etest.NewChatWorld(t, true,
		wiretest.WithSetting(agentsapp.KeyInvocationAckTimeout, "10s"),
		wiretest.WithSetting(agentsapp.KeyInvocationMaxDeliveries, "3"))
	e2etest.ServeLive(t, w)
	iw := &invocationWorld{ChatWorld: w}
	iw.robinSupport = w.Grant(t, w.Robin, "space", w.Support, "member")
	return iw
}

// delivered is an envelope as a client reads it, with the delivery-only members.
type delivered struct {
	Seq             int64           `json:"seq"`
	ID              uuid.UUID       `json:"id"`
	Type            string          `json:"type"`
	Payload         json.RawMessage `json:"payload"`
	InvocationToken *string         `json:"invocation_token"`
	Redelivered     *bool           `json:"redelivered"`
}

// invocation decodes the payload of an invocation event.
func (d delivered) invocation(t *testing.T) apigen.Invocation {
	t.Helper()
	var inv apigen.Invocation
	if err := json.Unmarshal(d.Payload, &inv); err != nil {
		t.Fatalf("invocation payload %s: %v", d.Payload, err)
	}
	return inv
}

// restDeliveries pages through ListEvents as a from after to the head and returns every
// envelope with its delivery-only members.
func (w *invocationWorld) restDeliveries(t *testing.T, a e2etest.Actor, after int64) []delivered {
	t.Helper()
	var out []delivered
	for range 1000 {
		var p struct {
			Events     []delivered `json:"events"`
			NextCursor int64       `json:"next_cursor"`
			HeadSeq    int64       `json:"head_seq"`
		}
		w.Must(t, a, http.MethodGet, "/api/v1/events?after="+strconv.FormatInt(after, 10), "", http.StatusOK, &p)
		out = append(out, p.Events...)
		if p.NextCursor == p.HeadSeq {
			return out
		}
		after = p.NextCursor
	}
	t.Fatalf("listEvents as %s did not reach the head", a.Name)
	return nil
}

// ofType keeps the deliveries of type typ.
func ofType(ds []delivered, typ string) []delivered {
	var out []delivered
	for _, d := range ds {
		if d.Type == typ {
			out = append(out, d)
		}
	}
	return out
}

// requireNoDeliveryOnly fails when any envelope but an invocation.requested carries a
// delivery-only member.
func requireNoDeliveryOnly(t *testing.T, who string, ds []delivered) {
	t.Helper()
	for _, d := range ds {
		if d.Type == "invocation.requested" {
			continue
		}
		if d.InvocationToken != nil || d.Redelivered != nil {
			t.Fatalf("%s got delivery-only members on %s (seq %d)", who, d.Type, d.Seq)
		}
	}
}

// storedOfType are the stored events of type typ after seq.
func (w *invocationWorld) storedOfType(t *testing.T, after int64, typ string) []syncdomain.StoredEvent {
	t.Helper()
	return e2etest.StoredWhere(w.EventsAfter(t, after), func(e syncdomain.StoredEvent) bool { return e.Type == typ })
}

// sweepInvocations runs one invocation sweep and checks its counts.
func (w *invocationWorld) sweepInvocations(t *testing.T, wantRedelivered, wantFailed int) {
	t.Helper()
	r, f, err := w.Env.App.SweepInvocations(t.Context())
	if err != nil {
		t.Fatalf("SweepInvocations: %v", err)
	}
	if r != wantRedelivered || f != wantFailed {
		t.Fatalf("SweepInvocations redelivered %d and failed %d, want %d and %d", r, f, wantRedelivered, wantFailed)
	}
}

// getInvocation reads an invocation as a and wants the status.
func (w *invocationWorld) getInvocation(t *testing.T, a e2etest.Actor, id uuid.UUID, want int) apigen.Invocation {
	t.Helper()
	var inv apigen.Invocation
	var out any
	if want == http.StatusOK {
		out = &inv
	}
	w.Must(t, a, http.MethodGet, "/api/v1/invocations/"+id.String(), "", want, out)
	return inv
}

// ackInvocation acknowledges an invocation as a with token and wants the status.
func (w *invocationWorld) ackInvocation(t *testing.T, a e2etest.Actor, id uuid.UUID, token string, want int) apigen.Invocation {
	t.Helper()
	var inv apigen.Invocation
	var out any
	if want == http.StatusOK {
		out = &inv
	}
	w.Must(t, a, http.MethodPost, "/api/v1/invocations/"+id.String()+"/ack", fmt.Sprintf(`{"invocation_token":%q}`, token), want, out)
	return inv
}

// invokeRobin posts a message of Alex's that mentions Robin in the tickets thread and returns
// Robin's delivery of its invocation.requested by REST catch-up (exactly one).
func (w *invocationWorld) invokeRobin(t *testing.T, text string) (apigen.Message, delivered) {
	t.Helper()
	before := w.Head(t)
	m := w.Post(t, w.Alex, w.TicketThread, text)
	got := ofType(w.restDeliveries(t, w.Robin, before), "invocation.requested")
	if len(got) != 1 {
		t.Fatalf("Robin got %d invocation.requested after the mention, want 1", len(got))
	}
	return m, got[0]
}

// TestInvocationByMention: a person's mention of an agent makes exactly one invocation in the
// message's transaction; the agent's catch-up, its consumer page and the gateway carry the
// token (the same on each), redelivered false; nobody else gets the event or the members, and
// the stored event has neither. getInvocation answers the agent and the invoking person.
func TestInvocationByMention(t *testing.T) {
	t.Parallel()
	w := newInvocationWorld(t)
	var consumer apigen.Consumer
	w.Must(t, w.Robin, http.MethodPut, "/api/v1/consumers/main", "", http.StatusCreated, &consumer)
	before := w.Head(t)
	m := w.Post(t, w.Alex, w.TicketThread, "@robin can you look at the printer? @robin")

	// Stored: message.created then exactly one invocation.requested, in the same transaction
	// (one occurred_at per transaction, consecutive seqs), addressed to Robin only.
	stored := w.EventsAfter(t, before)
	var created, requested []syncdomain.StoredEvent
	for _, e := range stored {
		switch e.Type {
		case "message.created":
			created = append(created, e)
		case "invocation.requested":
			requested = append(requested, e)
		}
	}
	if len(created) != 1 || len(requested) != 1 {
		t.Fatalf("stored %s, want one message.created and one invocation.requested", e2etest.Describe(stored))
	}
	req := requested[0]
	if req.Seq != created[0].Seq+1 || !req.OccurredAt.Equal(created[0].OccurredAt) {
		t.Fatalf("invocation.requested seq %d at %v, message.created seq %d at %v: not one transaction",
			req.Seq, req.OccurredAt, created[0].Seq, created[0].OccurredAt)
	}
	if req.AudienceID != w.Robin.ID || req.ThreadID != w.TicketThread || req.ChannelID != w.Tickets || req.ActorID != w.Alex.ID {
		t.Fatalf("stored invocation.requested %+v", req)
	}
	var payload map[string]any
	if err := json.Unmarshal(req.Payload, &payload); err != nil {
		t.Fatalf("payload: %v", err)
	}
	keys := make([]string, 0, len(payload))
	for k := range payload {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	wantKeys := []string{"agent_id", "attempt", "channel_id", "created_at", "id", "invoked_by", "message_id", "reason", "state", "thread_id"}
	if !slices.Equal(keys, wantKeys) {
		t.Fatalf("stored payload members %v, want %v (no token in the log)", keys, wantKeys)
	}
	if payload["agent_id"] != w.Robin.ID.String() || payload["message_id"] != m.Id.String() || payload["invoked_by"] != w.Alex.ID.String() ||
		payload["reason"] != "mention" || payload["state"] != "pending" || payload["attempt"] != float64(1) {
		t.Fatalf("stored payload %s", req.Payload)
	}

	// Robin's REST catch-up: the token and redelivered false on the invocation alone.
	robin := w.restDeliveries(t, w.Robin, before)
	requireNoDeliveryOnly(t, "Robin", robin)
	got := ofType(robin, "invocation.requested")
	if len(got) != 1 || got[0].InvocationToken == nil || *got[0].InvocationToken == "" || got[0].Redelivered == nil || *got[0].Redelivered {
		t.Fatalf("Robin's deliveries %+v", got)
	}
	token := *got[0].InvocationToken
	inv := got[0].invocation(t)

	// Nobody else: not Sam, who reads the thread, nor Alex, who invoked.
	for _, other := range []e2etest.Actor{w.Sam, w.Alex} {
		ds := w.restDeliveries(t, other, before)
		requireNoDeliveryOnly(t, other.Name, ds)
		if n := len(ofType(ds, "invocation.requested")); n != 0 {
			t.Fatalf("%s got %d invocation.requested", other.Name, n)
		}
	}

	// The consumer page gives Robin the same token.
	var page struct {
		Events []delivered `json:"events"`
	}
	w.Must(t, w.Robin, http.MethodGet, "/api/v1/consumers/main/events", "", http.StatusOK, &page)
	cg := ofType(page.Events, "invocation.requested")
	requireNoDeliveryOnly(t, "Robin's consumer", page.Events)
	if len(cg) != 1 || cg[0].InvocationToken == nil || *cg[0].InvocationToken != token || cg[0].Redelivered == nil || *cg[0].Redelivered {
		t.Fatalf("consumer page deliveries %+v, want the token %q", cg, token)
	}

	// So does the gateway, by catch-up on resume.
	head := w.Head(t)
	conn := e2etest.MustDial(t, w.Env.Server.URL, w.Robin.Token)
	conn.Send(fmt.Sprintf(`{"op":"resume","after":%d}`, before))
	frames := gatewayDeliveries(t, conn, head)
	_ = conn.Conn.Close(websocket.StatusNormalClosure, "")
	gg := ofType(frames, "invocation.requested")
	requireNoDeliveryOnly(t, "Robin's gateway", frames)
	if len(gg) != 1 || gg[0].InvocationToken == nil || *gg[0].InvocationToken != token || gg[0].Redelivered == nil || *gg[0].Redelivered {
		t.Fatalf("gateway deliveries %+v, want the token %q", gg, token)
	}

	// getInvocation: the agent and the invoker; Sam reads the thread but gets 404.
	for _, a := range []e2etest.Actor{w.Robin, w.Alex} {
		if g := w.getInvocation(t, a, inv.Id, http.StatusOK); g != inv {
			t.Fatalf("getInvocation as %s = %+v, want %+v", a.Name, g, inv)
		}
	}
	w.getInvocation(t, w.Sam, inv.Id, http.StatusNotFound)
	w.getInvocation(t, w.Robin, uuid.New(), http.StatusNotFound)
}

// gatewayDeliveries reads event frames until the cursor reaches through and returns their
// envelopes with the delivery-only members.
func gatewayDeliveries(t *testing.T, c *e2etest.GatewayClient, through int64) []delivered {
	t.Helper()
	var out []delivered
	for cursor := int64(-1); cursor < through; {
		f := c.Next()
		switch f.Op {
		case "event":
			var frame struct {
				Event delivered `json:"event"`
			}
			if err := json.Unmarshal(f.Raw, &frame); err != nil {
				t.Fatalf("event frame %s: %v", f.Raw, err)
			}
			out = append(out, frame.Event)
			cursor = frame.Event.Seq
		case "cursor", "catchup.complete":
			cursor = f.Cursor
		case "heartbeat":
		default:
			t.Fatalf("frame %s while reading through %d", f.Raw, through)
		}
	}
	return out
}

// TestInvocationAckStopsRedelivery: ackInvocation with the token acknowledges (idempotently);
// a wrong token, another principal's ack and a missing invocation are refused; an
// acknowledged invocation is never delivered again.
func TestInvocationAckStopsRedelivery(t *testing.T) {
	t.Parallel()
	w := newInvocationWorld(t)
	_, d := w.invokeRobin(t, "@robin please check")
	inv := d.invocation(t)
	token := *d.InvocationToken

	w.ackInvocation(t, w.Robin, inv.Id, token+"x", http.StatusNotFound)
	w.ackInvocation(t, w.Robin, inv.Id, "not a token", http.StatusNotFound)
	w.ackInvocation(t, w.Robin, uuid.New(), token, http.StatusNotFound)
	w.ackInvocation(t, w.Sam, inv.Id, token, http.StatusForbidden)
	for range 2 {
		got := w.ackInvocation(t, w.Robin, inv.Id, token, http.StatusOK)
		if got.State != apigen.InvocationStateAcknowledged || got.Attempt != 1 || got.Id != inv.Id {
			t.Fatalf("ack answered %+v", got)
		}
	}
	before := w.Head(t)
	for range 4 {
		w.Env.Clock.Advance(11 * time.Second)
		w.sweepInvocations(t, 0, 0)
	}
	if n := len(w.storedOfType(t, before, "invocation.requested")); n != 0 {
		t.Fatalf("an acknowledged invocation was delivered %d more times", n)
	}
}

// TestInvocationRedeliveryThenFailure: without an ack the sweeper delivers the invocation
// again after agents.invocation_ack_timeout, with the same token and redelivered true, up to
// agents.invocation_max_deliveries deliveries; after the last times out the invocation fails
// and invocation.failed reaches the invoking person and the agent, nobody else.
func TestInvocationRedeliveryThenFailure(t *testing.T) {
	t.Parallel()
	w := newInvocationWorld(t)
	start := w.Head(t)
	_, first := w.invokeRobin(t, "@robin are you there?")
	inv := first.invocation(t)
	token := *first.InvocationToken

	w.Env.Clock.Advance(9 * time.Second)
	w.sweepInvocations(t, 0, 0) // not yet timed out
	for attempt := 2; attempt <= 3; attempt++ {
		before := w.Head(t)
		w.Env.Clock.Advance(2 * time.Second)
		w.sweepInvocations(t, 1, 0)
		got := ofType(w.restDeliveries(t, w.Robin, before), "invocation.requested")
		if len(got) != 1 || got[0].InvocationToken == nil || *got[0].InvocationToken != token || got[0].Redelivered == nil || !*got[0].Redelivered {
			t.Fatalf("attempt %d deliveries %+v, want the same token, redelivered", attempt, got)
		}
		if p := got[0].invocation(t); p.Attempt != attempt || p.Id != inv.Id || p.State != apigen.InvocationStatePending {
			t.Fatalf("attempt %d payload %+v", attempt, p)
		}
		w.Env.Clock.Advance(8 * time.Second)
	}
	before := w.Head(t)
	w.Env.Clock.Advance(2 * time.Second)
	w.sweepInvocations(t, 0, 1)
	w.Env.Clock.Advance(time.Minute)
	w.sweepInvocations(t, 0, 0) // failed is final

	if n := len(w.storedOfType(t, start, "invocation.requested")); n != 3 {
		t.Fatalf("%d deliveries in all, want agents.invocation_max_deliveries = 3", n)
	}
	for _, a := range []e2etest.Actor{w.Alex, w.Robin} {
		ds := w.restDeliveries(t, a, before)
		requireNoDeliveryOnly(t, a.Name, ds)
		failed := ofType(ds, "invocation.failed")
		if len(failed) != 1 {
			t.Fatalf("%s got %d invocation.failed, want 1", a.Name, len(failed))
		}
		if p := failed[0].invocation(t); p.State != apigen.InvocationStateFailed || p.Attempt != 3 || p.Id != inv.Id {
			t.Fatalf("invocation.failed payload for %s: %+v", a.Name, p)
		}
	}
	if n := len(ofType(w.restDeliveries(t, w.Sam, start), "invocation.failed")); n != 0 {
		t.Fatalf("Sam got %d invocation.failed", n)
	}
	if g := w.getInvocation(t, w.Alex, inv.Id, http.StatusOK); g.State != apigen.InvocationStateFailed {
		t.Fatalf("getInvocation after the failure: %+v", g)
	}
}

// TestInvocationRevokedBeforeDelivery: a grant revoked between the invocation and its
// delivery hides it, as any thread event in catch-up, redeliveries included; the agent can
// neither acknowledge nor read it any more.
func TestInvocationRevokedBeforeDelivery(t *testing.T) {
	t.Parallel()
	w := newInvocationWorld(t)
	before := w.Head(t)
	w.Post(t, w.Alex, w.TicketThread, "@robin one more thing")
	stored := w.storedOfType(t, before, "invocation.requested")
	if len(stored) != 1 {
		t.Fatalf("stored %d invocation.requested, want 1", len(stored))
	}
	var inv apigen.Invocation
	if err := json.Unmarshal(stored[0].Payload, &inv); err != nil {
		t.Fatalf("payload: %v", err)
	}
	w.Revoke(t, w.robinSupport)
	w.Env.Clock.Advance(11 * time.Second)
	w.sweepInvocations(t, 1, 0)
	ds := w.restDeliveries(t, w.Robin, before)
	if n := len(ofType(ds, "invocation.requested")); n != 0 {
		t.Fatalf("Robin, no longer a reader, got %d invocation.requested", n)
	}
	requireNoDeliveryOnly(t, "Robin", ds)
	w.getInvocation(t, w.Robin, inv.Id, http.StatusNotFound)
}

// TestInvocationReplyAnswers: the agent's reply with the token is linked to the invocation
// (invocation_id in the answer and in message.created) and answers it; no redelivery follows;
// a second reply with the token is 409, a token of another thread or a forged one 400. A run
// naming an invocation acknowledges it; one of another agent or thread is refused.
func TestInvocationReplyAnswers(t *testing.T) {
	t.Parallel()
	w := newInvocationWorld(t)
	_, d := w.invokeRobin(t, "@robin what is the toner level?")
	inv := d.invocation(t)
	token := *d.InvocationToken
	path := "/api/v1/threads/" + w.TicketThread.String() + "/messages"

	before := w.Head(t)
	var reply apigen.Message
	w.Must(t, w.Robin, http.MethodPost, path, fmt.Sprintf(`{"content_md":"Half full.","invocation_token":%q}`, token), http.StatusCreated, &reply)
	if reply.InvocationId == nil || *reply.InvocationId != inv.Id {
		t.Fatalf("reply %+v, want invocation_id %s", reply, inv.Id)
	}
	created := w.storedOfType(t, before, "message.created")
	if len(created) != 1 {
		t.Fatalf("%d message.created for the reply", len(created))
	}
	if p := e2etest.PayloadOf(t, created[0]); p["invocation_id"] != inv.Id.String() {
		t.Fatalf("the reply's message.created %s, want invocation_id %s", created[0].Payload, inv.Id)
	}
	if g := w.getInvocation(t, w.Alex, inv.Id, http.StatusOK); g.State != apigen.InvocationStateAnswered {
		t.Fatalf("getInvocation after the reply: %+v", g)
	}
	if n := len(w.storedOfType(t, before, "invocation.requested")); n != 0 {
		t.Fatalf("the agent's reply invoked %d agents", n)
	}
	w.Env.Clock.Advance(time.Minute)
	w.sweepInvocations(t, 0, 0)

	r := w.Do(t, w.Robin, http.MethodPost, path, fmt.Sprintf(`{"content_md":"Again.","invocation_token":%q}`, token))
	if r.Status != http.StatusConflict {
		t.Fatalf("a second reply with the token = %d, want 409; body %s", r.Status, r.Body)
	}
	campaignsPath := "/api/v1/threads/" + w.CampaignThread.String() + "/messages"
	w.Grant(t, w.Robin, "space", w.Marketing, "member")
	for _, tc := range []struct{ path, token string }{
		{campaignsPath, token}, {path, "forged." + token}, {path, uuid.NewString() + ".abc"},
	} {
		r := w.Do(t, w.Robin, http.MethodPost, tc.path, fmt.Sprintf(`{"content_md":"x","invocation_token":%q}`, tc.token))
		if r.Status != http.StatusBadRequest || !slices.Equal(problemFields(t, r.Body), []string{"invocation_token"}) {
			t.Fatalf("a reply with token %q in %s = %d; body %s", tc.token, tc.path, r.Status, r.Body)
		}
	}

	// A run on an invocation acknowledges it.
	_, d2 := w.invokeRobin(t, "@robin and the paper?")
	inv2 := d2.invocation(t)
	runPath := "/api/v1/threads/" + w.TicketThread.String() + "/runs"
	r = w.Do(t, w.Robin, http.MethodPost, "/api/v1/threads/"+w.CampaignThread.String()+"/runs",
		fmt.Sprintf(`{"requested_by":%q,"invocation_id":%q}`, w.Sam.ID, inv2.Id))
	if r.Status != http.StatusBadRequest {
		t.Fatalf("a run in another thread naming the invocation = %d; body %s", r.Status, r.Body)
	}
	var run apigen.Run
	w.Must(t, w.Robin, http.MethodPost, runPath, fmt.Sprintf(`{"requested_by":%q,"invocation_id":%q}`, w.Alex.ID, inv2.Id), http.StatusCreated, &run)
	if run.InvocationId == nil || *run.InvocationId != inv2.Id {
		t.Fatalf("run %+v", run)
	}
	if g := w.getInvocation(t, w.Robin, inv2.Id, http.StatusOK); g.State != apigen.InvocationStateAcknowledged {
		t.Fatalf("getInvocation after the run: %+v", g)
	}
	w.Env.Clock.Advance(time.Minute)
	w.sweepInvocations(t, 0, 0)
}

// TestInvocationReplyOnEveryRead: the invocation a reply answers is stored on the message, so
// every read of it (listMessages, getMessage, editMessage's answer, a search hit) shows the
// same invocation_id as postMessage and message.created; a message that answers none (the
// mention, the thread's first message in getThread) shows no member.
func TestInvocationReplyOnEveryRead(t *testing.T) {
	t.Parallel()
	w := newInvocationWorld(t)
	mention, d := w.invokeRobin(t, "@robin what is the toner level?")
	inv := d.invocation(t)
	path := "/api/v1/threads/" + w.TicketThread.String() + "/messages"
	before := w.Head(t)
	var reply apigen.Message
	w.Must(t, w.Robin, http.MethodPost, path, fmt.Sprintf(`{"content_md":"Cartridge quarter full.","invocation_token":%q}`, *d.InvocationToken), http.StatusCreated, &reply)
	if reply.InvocationId == nil || *reply.InvocationId != inv.Id {
		t.Fatalf("postMessage %+v, want invocation_id %s", reply, inv.Id)
	}
	created := w.storedOfType(t, before, "message.created")
	if len(created) != 1 || e2etest.PayloadOf(t, created[0])["invocation_id"] != inv.Id.String() {
		t.Fatalf("message.created of the reply %+v, want invocation_id %s", created, inv.Id)
	}
	wantOf := func(id uuid.UUID) *uuid.UUID {
		if id == reply.Id {
			return &inv.Id
		}
		return nil
	}
	check := func(read string, m apigen.Message) {
		t.Helper()
		want := wantOf(m.Id)
		switch {
		case want == nil && m.InvocationId != nil:
			t.Fatalf("%s: message %s (seq %d) shows invocation_id %s, answers none", read, m.Id, m.Seq, m.InvocationId)
		case want != nil && (m.InvocationId == nil || *m.InvocationId != *want):
			t.Fatalf("%s: the reply shows invocation_id %v, want %s", read, m.InvocationId, want)
		}
	}

	seen := map[uuid.UUID]bool{}
	for _, a := range []e2etest.Actor{w.Alex, w.Sam, w.Robin} {
		for _, m := range w.Messages(t, a, w.TicketThread) {
			check("listMessages as "+a.Name, m)
			seen[m.Id] = true
		}
	}
	if !seen[reply.Id] || !seen[mention.Id] {
		t.Fatalf("listMessages lists the reply %v and the mention %v", seen[reply.Id], seen[mention.Id])
	}
	for _, id := range []uuid.UUID{reply.Id, mention.Id} {
		var m apigen.Message
		w.Must(t, w.Sam, http.MethodGet, "/api/v1/messages/"+id.String(), "", http.StatusOK, &m)
		check("getMessage", m)
	}
	var th apigen.ThreadView
	w.Must(t, w.Sam, http.MethodGet, "/api/v1/threads/"+w.TicketThread.String(), "", http.StatusOK, &th)
	check("getThread's first_message", th.FirstMessage)

	var res apigen.SearchResults
	w.Must(t, w.Alex, http.MethodGet, e2etest.SearchPath("q", "cartridge"), "", http.StatusOK, &res)
	if len(res.Items) != 1 || res.Items[0].Message.Id != reply.Id {
		t.Fatalf("searchMessages for the reply: %v", e2etest.HitIDs(res.Items))
	}
	check("searchMessages", res.Items[0].Message)

	var edited apigen.Message
	w.Must(t, w.Robin, http.MethodPatch, "/api/v1/messages/"+reply.Id.String(), `{"content_md":"Cartridge half full."}`, http.StatusOK, &edited)
	check("editMessage", edited)
	var after apigen.Message
	w.Must(t, w.Robin, http.MethodGet, "/api/v1/messages/"+reply.Id.String(), "", http.StatusOK, &after)
	check("getMessage after the edit", after)
}

// TestInvocationDirectMessage: a person's message in a direct message with an agent invokes it
// (reason direct_message), both the first message of a thread and a later post; the agent's
// own posts invoke nobody.
func TestInvocationDirectMessage(t *testing.T) {
	t.Parallel()
	w := newInvocationWorld(t)
	var ch apigen.Channel
	r := w.Do(t, w.Alex, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, w.Robin.ID))
	if r.Status != http.StatusCreated {
		t.Fatalf("createDirectMessage = %d; body %s", r.Status, r.Body)
	}
	r.JSON(t, &ch)
	before := w.Head(t)
	th := w.Thread(t, w.Alex, ch.Id, "Hello Robin")
	w.Post(t, w.Alex, th.Id, "Are you there?")
	w.Post(t, w.Robin, th.Id, "I am.")
	got := ofType(w.restDeliveries(t, w.Robin, before), "invocation.requested")
	if len(got) != 2 {
		t.Fatalf("Robin got %d invocations in the direct message, want 2", len(got))
	}
	for _, d := range got {
		p := d.invocation(t)
		if p.Reason != apigen.InvocationReasonDirectMessage || p.InvokedBy != w.Alex.ID || p.ThreadId != th.Id || d.InvocationToken == nil {
			t.Fatalf("direct-message invocation %+v", p)
		}
	}
	if n := len(ofType(w.restDeliveries(t, w.Alex, before), "invocation.requested")); n != 0 {
		t.Fatalf("Alex got %d invocation.requested", n)
	}
}

// TestInvocationLiveOnGateway: an invocation committed while the agent is connected reaches it
// live from the log tail with its token, and a redelivery with redelivered true; Sam's
// connection on the same thread gets neither the event nor the members.
func TestInvocationLiveOnGateway(t *testing.T) {
	t.Parallel()
	w := newInvocationWorld(t)
	head := w.Head(t)
	robin := e2etest.MustDial(t, w.Env.Server.URL, w.Robin.Token)
	robin.Send(fmt.Sprintf(`{"op":"resume","after":%d}`, head))
	sam := e2etest.MustDial(t, w.Env.Server.URL, w.Sam.Token)
	sam.Send(fmt.Sprintf(`{"op":"resume","after":%d}`, head))
	gatewayDeliveries(t, robin, head)
	gatewayDeliveries(t, sam, head)

	w.Post(t, w.Alex, w.TicketThread, "@robin live question")
	w.Env.Clock.Advance(11 * time.Second)
	w.sweepInvocations(t, 1, 0)
	stored := w.storedOfType(t, head, "invocation.requested")
	if len(stored) != 2 {
		t.Fatalf("stored %d invocation.requested, want 2", len(stored))
	}
	through := stored[1].Seq
	got := ofType(gatewayDeliveries(t, robin, through), "invocation.requested")
	if len(got) != 2 || got[0].InvocationToken == nil || got[1].InvocationToken == nil || *got[0].InvocationToken != *got[1].InvocationToken ||
		got[0].Redelivered == nil || *got[0].Redelivered || got[1].Redelivered == nil || !*got[1].Redelivered {
		t.Fatalf("Robin's live deliveries %+v", got)
	}
	// Sam's connection reads to the same point (a post of Sam's own moves nothing of Robin's):
	// Alex posts once more, which Sam receives, so Sam has read past the invocations.
	m := w.Post(t, w.Alex, w.TicketThread, "Thanks")
	after := w.storedOfType(t, through, "message.created")
	if len(after) != 1 || e2etest.PayloadOf(t, after[0])["message_id"] != m.Id.String() {
		t.Fatalf("stored message.created after the invocations: %s", e2etest.Describe(after))
	}
	ds := gatewayDeliveries(t, sam, after[0].Seq)
	requireNoDeliveryOnly(t, "Sam live", ds)
	if n := len(ofType(ds, "invocation.requested")); n != 0 {
		t.Fatalf("Sam got %d invocation.requested live", n)
	}
	_ = robin.Conn.Close(websocket.StatusNormalClosure, "")
	_ = sam.Conn.Close(websocket.StatusNormalClosure, "")
}
