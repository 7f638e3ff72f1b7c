package agents

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
)

var invocationSeed = flag.Uint64("wire.invocation.seed", 0, "seed of TestInvocationProperty (0: from the clock)")

const (
	// invocationWorlds is how many random worlds TestInvocationProperty builds, each with its
	// own database.
	invocationWorlds = 3
	// invocationSteps is how many random steps each world takes before its final drain.
	invocationSteps = 36
	// invAckTimeout and invMaxDeliveries are what newInvocationWorld sets
	// agents.invocation_ack_timeout and agents.invocation_max_deliveries to.
	invAckTimeout    = 10 * time.Second
	invMaxDeliveries = 3
)

// TestInvocationProperty is the invocation property test (ADR 0031). In random worlds Alex
// and Sam post, mention the agent Robin in threads of tickets (a channel of Support, which
// Robin reads while it holds its grant) and of campaigns (Marketing, which Robin never reads),
// and write to it in their direct messages with it; Robin's grant is revoked and given back at
// random (also while the worker is connected, and while it answers); the sweeper runs on the
// fake clock between sessions, at times agents.invocation_max_deliveries times in a row (the
// worker is down). Robin's worker runs sessions through its durable consumer over REST or the
// gateway, handling each invocation the way ADR 0031 asks of an agent (acknowledge at random,
// reply with the invocation_token, and make the reply idempotent per invocation, drawn at
// every handling: an Idempotency-Key derived from the invocation id, a getInvocation first,
// both, or neither; a 409 is success). Sessions die at random points: on receipt, before or
// after the ack, before or after the reply, with the socket closed mid-batch (abruptly or not)
// or a page left unacknowledged, and consumer acks are lost. A model of the invocations
// (state, attempt, last delivery, reply) predicts every answer and every sweep.
//
// Checked, after every step and at the end:
//
//   - a mention or direct message makes an invocation exactly when Robin may read the thread;
//   - answered exactly once: at most one reply linked to an invocation (message.created with
//     its invocation_id in the log, the reply in listMessages as the invoker), exactly one once
//     the worker's reply was accepted, and a repeated reply replays (Idempotency-Key) or is 409;
//   - at least once: the consumer never passes an invocation's delivery that Robin could read
//     and the worker did not process, so at the end every invocation is answered unless each of
//     its deliveries was hidden (grant revoked) or refused mid-answer; every delivery a session
//     gets is what ListEvents gives Robin from the consumer's acked_seq;
//   - never more than agents.invocation_max_deliveries invocation.requested per invocation, the
//     attempts 1, 2, ... with redelivered false on the first and true after, the same token on
//     each;
//   - nothing Robin may not read reaches it: no event of campaigns ever, none of tickets while
//     the grant is revoked (an invocation made before the revocation included: Robin's whole
//     catch-up is checked at every revocation) but its own read state, getInvocation and
//     ackInvocation 404 meanwhile;
//   - invocation_token and redelivered only on Robin's invocation.requested: never on its other
//     events, never in Alex's or Sam's catch-up (REST or gateway), in a snapshot, or in the log;
//   - a failed invocation gives invocation.failed to its invoker and to Robin, nobody else.
//
// The seed is logged; -wire.invocation.seed replays it.
func TestInvocationProperty(t *testing.T) {
	t.Parallel()
	seed := e2etest.PropertySeed(t, "wire.invocation.seed", *invocationSeed)
	for i := range invocationWorlds {
		t.Run(fmt.Sprintf("world %d", i), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, uint64(i))) //nolint:gosec // G404: reproducible test worlds, not secrets
			p := newInvProp(t, r)
			p.frames = rand.New(rand.NewPCG(seed, uint64(invocationWorlds+i))) //nolint:gosec // G404: as r
			for step := range invocationSteps {
				switch k := r.IntN(20); {
				case k < 7:
					p.randomPost(t, step)
				case k < 8:
					p.randomThread(t, step)
				case k < 10:
					p.toggleGrant(t)
				case k < 12:
					p.sweep(t, time.Duration(r.IntN(13))*time.Second)
				case k < 13:
					// The worker is down for a while: the sweeper redelivers until the pending
					// invocations fail.
					for range invMaxDeliveries {
						p.sweep(t, invAckTimeout)
					}
				default:
					p.session(t, true, false)
				}
				p.checkLog(t, step)
			}
			p.finish(t)
		})
	}
}

// threadKind says who may read a thread of the property test.
type threadKind int

const (
	// ticketsThread is in tickets: Robin reads it while it holds its grant on Support.
	ticketsThread threadKind = iota
	// campaignsThread is in campaigns: Robin never reads it.
	campaignsThread
	// dmThread is in a direct message with Robin: Robin always reads it.
	dmThread
)

// propThread is a thread people post in.
type propThread struct {
	id      uuid.UUID
	kind    threadKind
	channel uuid.UUID
	posters []e2etest.Actor
}

// passReason says why the consumer passed an invocation.requested.
type passReason int

const (
	// passedProcessed: the worker got it while Robin could read the thread and handled it.
	passedProcessed passReason = iota + 1
	// passedGaveUp: the worker got it, but Robin lost the thread before the reply (refused).
	passedGaveUp
	// passedHidden: Robin could not read the thread, so the consumer never delivered it.
	passedHidden
)

// propInvocation is the model of one invocation and what was observed of it.
type propInvocation struct {
	id, thread, message uuid.UUID
	kind                threadKind
	invoker             e2etest.Actor

	// The model: what the server must hold.
	attempt     int
	state       apigen.InvocationState
	deliveredAt time.Time
	everFailed  bool
	reply       uuid.UUID // the accepted reply
	keyStored   bool      // the worker's Idempotency-Key holds the accepted reply

	// Observed: the log and the deliveries.
	token    string  // from the first delivery
	events   []int64 // seqs of its invocation.requested, in attempt order
	failedTo []uuid.UUID
	replies  int // message.created linked to it
	seen     int // deliveries to the worker
	passed   map[int64]passReason
}

// propSession is what one worker session got and did.
type propSession struct {
	mayDie    bool // this session may be killed and lose acks
	mayRevoke bool // the grant may be revoked while the worker answers (REST only)
	granted   bool // Robin held its grant at the start
	changed   bool // the grant was revoked (or given back) during the session
	delivered []int64
	handled   map[int64]passReason // what this session handled
	acks      []int64              // acks the worker sent
	confirmed int64                // the highest ack the server confirmed, 0 for none
	through   int64                // the cursor a session that was not killed caught up to
	touched   []*propInvocation
}

// propStats counts what a world exercised, for the log.
type propStats struct {
	sessions, killed, live, replies, replayed, conflicts, skipped, gaveUp, revokedMidAnswer, hidden int
}

// invProp is one random world of TestInvocationProperty.
type invProp struct {
	*invocationWorld
	cw *e2etest.ConsumerWorld
	r  *rand.Rand
	// frames draws the decisions on frames whose number depends on timing (cursor frames).
	frames *rand.Rand

	granted    bool
	robinGrant uuid.UUID // Robin's grant on Support while granted

	threads []*propThread
	alexDM  *propThread // Alex's direct message with Robin
	invs    map[uuid.UUID]*propInvocation
	order   []*propInvocation

	own        map[int64]bool       // seqs of the personal events addressed to Robin
	handledAll map[int64]passReason // every delivery the worker handled, in any session
	start      int64                // the head before the first invocation
	logged     int64                // the log is read up to here
	acked      int64                // the consumer's acked_seq as last read
	stats      propStats
}

func newInvProp(t *testing.T, r *rand.Rand) *invProp {
	t.Helper()
	w := newInvocationWorld(t)
	p := &invProp{
		invocationWorld: w, cw: &e2etest.ConsumerWorld{ChatWorld: w.ChatWorld}, r: r,
		granted: true, robinGrant: w.robinSupport, invs: map[uuid.UUID]*propInvocation{}, own: map[int64]bool{},
		handledAll: map[int64]passReason{},
	}
	// Sam (a viewer of Support) writes in tickets too.
	w.Grant(t, w.Sam, "channel", w.Tickets, "member")
	p.start = w.Head(t)
	p.logged = p.start
	p.acked = p.cw.Consumer(t, w.Robin, "main", http.StatusCreated).AckedSeq
	p.threads = []*propThread{
		{id: w.TicketThread, kind: ticketsThread, channel: w.Tickets, posters: []e2etest.Actor{w.Alex, w.Sam}},
		{id: w.CampaignThread, kind: campaignsThread, channel: w.Campaigns, posters: []e2etest.Actor{w.Alex, w.Sam}},
	}
	// A direct message of Alex's and one of Sam's with Robin; the first message of each invokes.
	for _, who := range []e2etest.Actor{w.Alex, w.Sam} {
		var ch apigen.Channel
		w.Must(t, who, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, w.Robin.ID), http.StatusCreated, &ch)
		th := &propThread{kind: dmThread, channel: ch.Id, posters: []e2etest.Actor{who}}
		first := w.Thread(t, who, ch.Id, "Hello Robin")
		th.id = first.Id
		p.threads = append(p.threads, th)
		if who == p.Alex {
			p.alexDM = th
		}
		p.expectInvocation(t, first.FirstMessage.Id, who, th, apigen.InvocationReasonDirectMessage)
	}
	return p
}

// readable reports whether Robin may read a thread of kind now.
func (p *invProp) readable(kind threadKind) bool {
	switch kind {
	case ticketsThread:
		return p.granted
	case dmThread:
		return true
	default:
		return false
	}
}

// replyText is the worker's reply to an invocation: the same on every attempt, so a repeated
// reply with the same Idempotency-Key has the same body.
func replyText(id uuid.UUID) string { return "Answer to " + id.String() }

// RandomPost is a post of Alex's or Sam's in a random thread, mentioning Robin at random.
func (p *invProp) randomPost(t *testing.T, step int) {
	t.Helper()
	th := p.threads[p.r.IntN(len(p.threads))]
	who := th.posters[p.r.IntN(len(th.posters))]
	mention := p.r.IntN(3) != 0
	if th.kind == dmThread {
		mention = p.r.IntN(2) == 0
	}
	text := fmt.Sprintf("Step %d", step)
	if mention {
		text = "@robin " + text
	}
	m := p.Post(t, who, th.id, text)
	p.afterPost(t, m.Id, who, th, mention)
}

// randomThread is a new thread of Alex's or Sam's in tickets or campaigns whose first message
// mentions Robin at random.
func (p *invProp) randomThread(t *testing.T, step int) {
	t.Helper()
	th := &propThread{kind: ticketsThread, channel: p.Tickets, posters: []e2etest.Actor{p.Alex, p.Sam}}
	if p.r.IntN(3) == 0 {
		th.kind, th.channel = campaignsThread, p.Campaigns
	}
	who := th.posters[p.r.IntN(len(th.posters))]
	mention := p.r.IntN(3) != 0
	text := fmt.Sprintf("Thread of step %d", step)
	if mention {
		text = "@robin " + text
	}
	created := p.Thread(t, who, th.channel, text)
	th.id = created.Id
	p.threads = append(p.threads, th)
	p.afterPost(t, created.FirstMessage.Id, who, th, mention)
}

// afterPost checks that the message made an invocation exactly when it should: a mention or a
// direct message, while Robin may read the thread.
func (p *invProp) afterPost(t *testing.T, message uuid.UUID, who e2etest.Actor, th *propThread, mention bool) {
	t.Helper()
	invokes := mention || th.kind == dmThread
	if !invokes || !p.readable(th.kind) {
		if fresh := p.readLog(t); len(fresh) != 0 {
			t.Fatalf("a message of %s (mention %v, thread kind %d, granted %v) made invocations %v", who.Name, mention, th.kind, p.granted, fresh)
		}
		return
	}
	reason := apigen.InvocationReasonDirectMessage
	if mention {
		reason = apigen.InvocationReasonMention
	}
	p.expectInvocation(t, message, who, th, reason)
}

// expectInvocation reads the log and wants exactly one new invocation, of the message.
func (p *invProp) expectInvocation(t *testing.T, message uuid.UUID, who e2etest.Actor, th *propThread, reason apigen.InvocationReason) {
	t.Helper()
	fresh := p.readLog(t)
	if len(fresh) != 1 {
		t.Fatalf("a message of %s in a thread Robin reads made %d invocations, want 1", who.Name, len(fresh))
	}
	x := fresh[0]
	inv := x.payloadOf
	if inv.MessageId != message || inv.InvokedBy != who.ID || inv.ThreadId != th.id || inv.AgentId != p.Robin.ID || inv.Reason != reason ||
		inv.State != apigen.InvocationStatePending || inv.ChannelId != th.channel {
		t.Fatalf("invocation %+v, want of message %s by %s in thread %s, reason %s", inv, message, who.Name, th.id, reason)
	}
	x.inv.thread, x.inv.message, x.inv.kind, x.inv.invoker = th.id, message, th.kind, who
}

// freshInvocation is an invocation the log showed for the first time.
type freshInvocation struct {
	inv       *propInvocation
	payloadOf apigen.Invocation
}

// readLog reads the log from where it stopped: no stored payload holds a delivery-only member;
// every invocation.requested is addressed to Robin with the next attempt of its invocation
// (new ones, attempt 1, are returned); invocation.failed goes to the invoker and Robin;
// message.created with an invocation_id counts a reply.
func (p *invProp) readLog(t *testing.T) []freshInvocation {
	t.Helper()
	var fresh []freshInvocation
	for _, e := range p.EventsAfter(t, p.logged) {
		p.logged = e.Seq
		if e.AudienceID == p.Robin.ID {
			p.own[e.Seq] = true
		}
		if bytes.Contains(e.Payload, []byte(`"invocation_token"`)) || bytes.Contains(e.Payload, []byte(`"redelivered"`)) {
			t.Fatalf("the stored %s (seq %d) holds a delivery-only member: %s", e.Type, e.Seq, e.Payload)
		}
		switch e.Type {
		case "invocation.requested", "invocation.failed":
			var inv apigen.Invocation
			if err := json.Unmarshal(e.Payload, &inv); err != nil {
				t.Fatalf("stored %s: %v", e.Type, err)
			}
			x := p.invs[inv.Id]
			if e.Type == "invocation.failed" {
				if x == nil || (e.AudienceID != x.invoker.ID && e.AudienceID != p.Robin.ID) || slices.Contains(x.failedTo, e.AudienceID) {
					t.Fatalf("stored invocation.failed (seq %d) for %s to %s", e.Seq, inv.Id, e.AudienceID)
				}
				x.failedTo = append(x.failedTo, e.AudienceID)
				continue
			}
			if e.AudienceID != p.Robin.ID || e.ThreadID != inv.ThreadId {
				t.Fatalf("stored invocation.requested (seq %d) to %s in thread %s, payload %+v", e.Seq, e.AudienceID, e.ThreadID, inv)
			}
			if x == nil {
				if inv.Attempt != 1 {
					t.Fatalf("a new invocation %s appears with attempt %d", inv.Id, inv.Attempt)
				}
				x = &propInvocation{
					id: inv.Id, attempt: 1, state: apigen.InvocationStatePending,
					deliveredAt: p.Env.Clock.Now(), passed: map[int64]passReason{},
				}
				p.invs[inv.Id] = x
				p.order = append(p.order, x)
				fresh = append(fresh, freshInvocation{inv: x, payloadOf: inv})
			}
			x.events = append(x.events, e.Seq)
			if inv.Attempt != len(x.events) || inv.Attempt > invMaxDeliveries {
				t.Fatalf("invocation %s: stored delivery %d has attempt %d (max %d)", inv.Id, len(x.events), inv.Attempt, invMaxDeliveries)
			}
		case "message.created":
			var m struct {
				InvocationID *uuid.UUID `json:"invocation_id"`
				AuthorID     uuid.UUID  `json:"author_id"`
			}
			if err := json.Unmarshal(e.Payload, &m); err != nil {
				t.Fatalf("stored message.created: %v", err)
			}
			if m.InvocationID != nil {
				x := p.invs[*m.InvocationID]
				if x == nil || m.AuthorID != p.Robin.ID {
					t.Fatalf("a reply by %s linked to the unknown invocation %s", m.AuthorID, *m.InvocationID)
				}
				x.replies++
			}
		}
	}
	return fresh
}

// checkLog compares what the log holds of each invocation with the model.
func (p *invProp) checkLog(t *testing.T, step int) {
	t.Helper()
	if fresh := p.readLog(t); len(fresh) != 0 {
		t.Fatalf("step %d: invocations %v out of nowhere", step, fresh)
	}
	for _, x := range p.order {
		wantReplies := 0
		if x.state == apigen.InvocationStateAnswered {
			wantReplies = 1
		}
		wantFailed := 0
		if x.everFailed {
			wantFailed = 2
		}
		if len(x.events) != x.attempt || x.replies != wantReplies || len(x.failedTo) != wantFailed {
			t.Fatalf("step %d: invocation %s stored %d deliveries, %d replies, %d invocation.failed; the model says attempt %d, state %s, ever failed %v",
				step, x.id, len(x.events), x.replies, len(x.failedTo), x.attempt, x.state, x.everFailed)
		}
	}
}

// toggleGrant revokes Robin's grant on Support, or gives it back; while it is revoked, Robin
// can neither read nor acknowledge an invocation in tickets.
func (p *invProp) toggleGrant(t *testing.T) {
	t.Helper()
	if !p.granted {
		p.robinGrant = p.Grant(t, p.Robin, "space", p.Support, "member")
		p.granted = true
		return
	}
	p.Revoke(t, p.robinGrant)
	p.granted = false
	// Robin's catch-up from the start now holds nothing of tickets but its own read state:
	// the invocations made before the revocation, delivered or not, included.
	for _, d := range p.robinCatchUp(t) {
		p.checkDelivery(t, d)
	}
	for _, x := range p.order {
		if x.kind != ticketsThread {
			continue
		}
		p.getInvocation(t, p.Robin, x.id, http.StatusNotFound)
		if x.token != "" {
			p.ackInvocation(t, p.Robin, x.id, x.token, http.StatusNotFound)
		}
		// The invoker still reads it.
		if g := p.getInvocation(t, x.invoker, x.id, http.StatusOK); g.State != x.state || g.Attempt != x.attempt {
			t.Fatalf("getInvocation %s as %s = %+v, the model says %s attempt %d", x.id, x.invoker.Name, g, x.state, x.attempt)
		}
		return
	}
}

// sweep moves the clock by d and runs the sweeper, whose counts the model predicts: every
// pending invocation whose last delivery is agents.invocation_ack_timeout old is delivered
// again below agents.invocation_max_deliveries deliveries, else failed.
func (p *invProp) sweep(t *testing.T, d time.Duration) {
	t.Helper()
	now := p.Env.Clock.Advance(d)
	redelivered, failed := 0, 0
	for _, x := range p.order {
		if x.state != apigen.InvocationStatePending || x.deliveredAt.After(now.Add(-invAckTimeout)) {
			continue
		}
		if x.attempt < invMaxDeliveries {
			x.attempt++
			x.deliveredAt = now
			redelivered++
			continue
		}
		x.state, x.everFailed = apigen.InvocationStateFailed, true
		failed++
	}
	p.sweepInvocations(t, redelivered, failed)
	if fresh := p.readLog(t); len(fresh) != 0 {
		t.Fatalf("the sweep made invocations %v", fresh)
	}
}

// propDelivery is an envelope as the worker reads it.
type propDelivery struct {
	Seq             int64           `json:"seq"`
	Type            string          `json:"type"`
	ChannelID       *uuid.UUID      `json:"channel_id"`
	ThreadID        *uuid.UUID      `json:"thread_id"`
	Payload         json.RawMessage `json:"payload"`
	InvocationToken *string         `json:"invocation_token"`
	Redelivered     *bool           `json:"redelivered"`
}

// session runs one session of Robin's worker over REST or the gateway (a clean one when
// mayDie is false: nothing killed, no ack lost), then checks what its consumer did.
func (p *invProp) session(t *testing.T, mayDie, rest bool) {
	t.Helper()
	// Nothing but the worker's acks moves the consumer (the gateway's acks were confirmed).
	if c := p.cw.Consumer(t, p.Robin, "main", http.StatusOK); c.AckedSeq != p.acked {
		t.Fatalf("acked_seq moved from %d to %d between sessions", p.acked, c.AckedSeq)
	}
	s := &propSession{mayDie: mayDie, granted: p.granted, handled: map[int64]passReason{}}
	ackedStart := p.acked
	gateway := !rest && p.r.IntN(2) == 0
	if gateway {
		p.gatewaySession(t, s)
	} else {
		s.mayRevoke = mayDie
		p.restSession(t, s)
	}
	p.stats.sessions++
	c := p.cw.Consumer(t, p.Robin, "main", http.StatusOK)
	if s.confirmed > 0 && c.AckedSeq < s.confirmed {
		t.Fatalf("acked_seq %d below the ack %d the server confirmed", c.AckedSeq, s.confirmed)
	}
	p.settle(t, s, c.AckedSeq)

	// What the session got is what ListEvents gives Robin from where the consumer stood (a
	// prefix of it when the session died), unless the grant changed during the session.
	if !s.changed {
		want := p.restSeqsFrom(t, ackedStart)
		if len(s.delivered) > len(want) || !slices.Equal(s.delivered, want[:len(s.delivered)]) {
			t.Fatalf("the session (gateway %v) got %v, listEvents from %d gives Robin %v", gateway, s.delivered, ackedStart, want)
		}
		caughtUp := slices.DeleteFunc(slices.Clone(want), func(seq int64) bool { return seq > s.through })
		if !mayDie && !slices.Equal(s.delivered[:min(len(s.delivered), len(caughtUp))], caughtUp) {
			t.Fatalf("a clean session (gateway %v) got %v, listEvents gives Robin %v", gateway, s.delivered, want)
		}
	}
	// Answered at most once, exactly once when accepted, as the invoker reads the thread.
	for _, x := range s.touched {
		p.checkReplies(t, x)
	}
	// A snapshot of anyone, invocations pending or not, holds no delivery-only member.
	p.checkSnapshot(t, []e2etest.Actor{p.Alex, p.Sam, p.Robin}[p.r.IntN(3)])
}

// checkSnapshot fails when who's snapshot holds a delivery-only member.
func (p *invProp) checkSnapshot(t *testing.T, who e2etest.Actor) {
	t.Helper()
	r := p.Must(t, who, http.MethodGet, "/api/v1/sync/snapshot", "", http.StatusOK, nil)
	if bytes.Contains(r.Body, []byte(`"invocation_token"`)) || bytes.Contains(r.Body, []byte(`"redelivered"`)) {
		t.Fatalf("the snapshot of %s holds a delivery-only member", who.Name)
	}
}

// restSeqsFrom is ListEvents as Robin from after to the head.
func (p *invProp) restSeqsFrom(t *testing.T, after int64) []int64 {
	t.Helper()
	var out []int64
	for _, d := range p.restDeliveries(t, p.Robin, after) {
		out = append(out, d.Seq)
	}
	return out
}

// dies decides whether the worker is killed at this point of a session that may die.
func (p *invProp) dies(s *propSession) bool {
	if s.mayDie && p.r.IntN(14) == 0 {
		p.stats.killed++
		return true
	}
	return false
}

// lost decides whether an ack of a session that may die is lost.
func (p *invProp) lost(s *propSession) bool { return s.mayDie && p.r.IntN(4) == 0 }

// RestSession pages the consumer with a random page size, handles each page and acks its
// next_cursor, until caught up, killed or an ack is lost.
func (p *invProp) restSession(t *testing.T, s *propSession) {
	t.Helper()
	s.through = 1 << 62
	limit := []int{1, 3, 500}[p.r.IntN(3)]
	for range 500 {
		var page struct {
			Events     []propDelivery `json:"events"`
			NextCursor int64          `json:"next_cursor"`
			HeadSeq    int64          `json:"head_seq"`
		}
		p.Must(t, p.Robin, http.MethodGet, fmt.Sprintf("/api/v1/consumers/main/events?limit=%d", limit), "", http.StatusOK, &page)
		for _, d := range page.Events {
			p.checkDelivery(t, d)
			s.delivered = append(s.delivered, d.Seq)
		}
		for _, d := range page.Events {
			if !p.handle(t, s, d) {
				return
			}
		}
		if p.lost(s) {
			return
		}
		p.cw.Ack(t, p.Robin, "main", page.NextCursor, http.StatusOK)
		s.acks = append(s.acks, page.NextCursor)
		s.confirmed = max(s.confirmed, page.NextCursor)
		if len(page.Events) == 0 && page.NextCursor >= page.HeadSeq {
			return
		}
	}
	t.Fatal("the consumer never caught up")
}

// GatewaySession resumes with the consumer, handles the catch-up as it arrives and acks at
// random on the way (ack frames, some lost), then acks catchup.complete's cursor; killed, it
// closes the socket mid-batch, abruptly or not.
func (p *invProp) gatewaySession(t *testing.T, s *propSession) {
	t.Helper()
	c := e2etest.MustDial(t, p.Env.Server.URL, p.Robin.Token)
	defer func() { _ = c.Conn.CloseNow() }()
	kill := func() {
		if p.r.IntN(2) == 0 {
			_ = c.Conn.CloseNow()
			return
		}
		_ = c.Conn.Close(websocket.StatusNormalClosure, "")
	}
	// Frames read while waiting for an acked frame, handled after it.
	var queued []e2etest.GatewayFrame
	next := func() e2etest.GatewayFrame {
		if len(queued) > 0 {
			f := queued[0]
			queued = queued[1:]
			return f
		}
		return c.Next()
	}
	// ack sends an ack frame at random (or loses it) and waits for its acked frame, so that
	// no ack of a session is still on its way when the next session starts. The draws come
	// from r: cursor frames, whose number depends on timing, draw from p.frames, so that they
	// do not shift the world's stream and a seed replays.
	ack := func(seq int64, r *rand.Rand) {
		if r.IntN(3) != 0 || s.mayDie && r.IntN(4) == 0 {
			return
		}
		c.Send(fmt.Sprintf(`{"op":"ack","seq":%d}`, seq))
		s.acks = append(s.acks, seq)
		for {
			f := c.Next()
			if f.Op != "acked" {
				queued = append(queued, f)
				continue
			}
			var a e2etest.GatewayConsumerFrame
			if err := json.Unmarshal(f.Raw, &a); err != nil {
				t.Fatalf("acked frame %s: %v", f.Raw, err)
			}
			if a.AckedSeq >= seq {
				s.confirmed = max(s.confirmed, a.AckedSeq)
				return
			}
		}
	}
	// onEvent checks and handles an event frame; false when the worker was killed.
	onEvent := func(f e2etest.GatewayFrame) (int64, bool) {
		var d propDelivery
		if err := json.Unmarshal(f.Event, &d); err != nil {
			t.Fatalf("event frame %s: %v", f.Raw, err)
		}
		p.checkDelivery(t, d)
		s.delivered = append(s.delivered, d.Seq)
		if !p.handle(t, s, d) {
			kill()
			return d.Seq, false
		}
		ack(d.Seq, p.r)
		return d.Seq, true
	}
	// readThrough reads, handling events, until the cursor reaches seq.
	readThrough := func(seq int64) bool {
		for {
			f := next()
			switch f.Op {
			case "event":
				got, ok := onEvent(f)
				if !ok {
					return false
				}
				if got >= seq {
					return true
				}
			case "cursor":
				if f.Cursor >= seq {
					return true
				}
			case "acked", "heartbeat":
			default:
				t.Fatalf("frame %s while reading live events", f.Raw)
			}
		}
	}
	c.Send(`{"op":"resume","consumer":"main"}`)
	complete := int64(-1)
	for complete < 0 {
		f := next()
		switch f.Op {
		case "event":
			if _, ok := onEvent(f); !ok {
				return
			}
		case "cursor":
			ack(f.Cursor, p.frames)
		case "catchup.complete":
			complete = f.Cursor
			s.through = complete
		case "acked", "heartbeat":
		default:
			t.Fatalf("frame %s during the catch-up", f.Raw)
		}
	}
	target := complete
	if s.mayDie && p.r.IntN(2) == 0 {
		// Live: first everything Robin sees so far (the worker's own replies), so that nothing
		// sent before a revocation is taken for a delivery after it; then the world changes
		// while the worker is connected, and Alex writes to Robin in their direct message.
		if want := p.restSeqsFrom(t, complete); len(want) > 0 && !readThrough(want[len(want)-1]) {
			return
		}
		if p.r.IntN(3) == 0 {
			p.toggleGrant(t)
			s.changed = true
		}
		if p.r.IntN(2) == 0 {
			p.sweep(t, time.Duration(p.r.IntN(13))*time.Second)
		}
		if p.r.IntN(2) == 0 {
			p.randomPost(t, -1)
		}
		m := p.Post(t, p.Alex, p.alexDM.id, "@robin live")
		p.afterPost(t, m.Id, p.Alex, p.alexDM, true)
		target = p.order[len(p.order)-1].events[0]
		if !readThrough(target) {
			return
		}
		p.stats.live++
	}
	if p.dies(s) || p.lost(s) {
		kill()
		return
	}
	c.Send(fmt.Sprintf(`{"op":"ack","seq":%d}`, target))
	s.acks = append(s.acks, target)
	for {
		f := next()
		switch f.Op {
		case "acked":
			var a e2etest.GatewayConsumerFrame
			if err := json.Unmarshal(f.Raw, &a); err != nil {
				t.Fatalf("acked frame %s: %v", f.Raw, err)
			}
			if a.AckedSeq >= target {
				s.confirmed = a.AckedSeq
				_ = c.Conn.Close(websocket.StatusNormalClosure, "")
				return
			}
		case "event":
			// Live (the worker's own replies): checked, neither handled nor acknowledged.
			var d propDelivery
			if err := json.Unmarshal(f.Event, &d); err != nil {
				t.Fatalf("event frame %s: %v", f.Raw, err)
			}
			p.checkDelivery(t, d)
			s.delivered = append(s.delivered, d.Seq)
		case "cursor", "heartbeat":
		default:
			t.Fatalf("frame %s while waiting for acked", f.Raw)
		}
	}
}

// checkDelivery holds one delivery to Robin to what Robin may read now, and its delivery-only
// members to the invocation it delivers.
func (p *invProp) checkDelivery(t *testing.T, d propDelivery) {
	t.Helper()
	if d.Seq > p.logged {
		if fresh := p.readLog(t); len(fresh) != 0 {
			t.Fatalf("invocations %v appeared during a session", fresh)
		}
	}
	// Robin's own personal events (its read state) are its own data, delivered without a
	// check (spec 03, catch-up step 4); every other event only while Robin may read its place.
	own := p.own[d.Seq] && d.Type != "invocation.requested" && d.Type != "invocation.failed"
	if !own && d.ChannelID != nil && (*d.ChannelID == p.Campaigns || *d.ChannelID == p.Tickets && !p.granted) {
		t.Fatalf("Robin got %s (seq %d) in channel %s, which it may not read (granted %v)", d.Type, d.Seq, *d.ChannelID, p.granted)
	}
	if d.Type != "invocation.requested" {
		if d.InvocationToken != nil || d.Redelivered != nil {
			t.Fatalf("Robin got delivery-only members on %s (seq %d)", d.Type, d.Seq)
		}
		return
	}
	var inv apigen.Invocation
	if err := json.Unmarshal(d.Payload, &inv); err != nil {
		t.Fatalf("invocation.requested payload %s: %v", d.Payload, err)
	}
	x := p.invs[inv.Id]
	if x == nil || !slices.Contains(x.events, d.Seq) || inv.AgentId != p.Robin.ID || !p.readable(x.kind) {
		if x == nil {
			t.Fatalf("Robin got invocation.requested (seq %d) %+v, an invocation the log does not hold", d.Seq, inv)
		}
		t.Fatalf("Robin got invocation.requested (seq %d) %+v; the log holds it at %v, Robin reads its thread (kind %d) %v; log read to %d: %s",
			d.Seq, inv, x.events, x.kind, p.readable(x.kind), p.logged, e2etest.Describe(p.EventsAfter(t, d.Seq-15)))
	}
	if inv.Attempt != slices.Index(x.events, d.Seq)+1 {
		t.Fatalf("delivery seq %d of invocation %s has attempt %d, stored as delivery %d", d.Seq, x.id, inv.Attempt, slices.Index(x.events, d.Seq)+1)
	}
	if d.InvocationToken == nil || *d.InvocationToken == "" || d.Redelivered == nil || *d.Redelivered != (inv.Attempt > 1) {
		t.Fatalf("delivery seq %d (attempt %d) has token %v, redelivered %v", d.Seq, inv.Attempt, d.InvocationToken, d.Redelivered)
	}
	if x.token == "" {
		x.token = *d.InvocationToken
	} else if *d.InvocationToken != x.token {
		t.Fatalf("invocation %s delivered with token %q, before with %q", x.id, *d.InvocationToken, x.token)
	}
}

// handle is the worker's handling of one delivery (checked already); false when the worker
// was killed. An invocation is answered idempotently: getInvocation first at random (skip it
// when it is answered), an ack at random, then the reply with the token (at random with an
// Idempotency-Key derived from the invocation id); a 409 is success, a refusal because Robin
// lost the thread gives up. The model predicts every answer.
func (p *invProp) handle(t *testing.T, s *propSession, d propDelivery) bool {
	t.Helper()
	if p.dies(s) {
		return false
	}
	if d.Type != "invocation.requested" {
		p.handled(s, d.Seq, passedProcessed)
		return true
	}
	var inv apigen.Invocation
	if err := json.Unmarshal(d.Payload, &inv); err != nil {
		t.Fatalf("invocation.requested payload: %v", err)
	}
	x := p.invs[inv.Id]
	x.seen++
	if !slices.Contains(s.touched, x) {
		s.touched = append(s.touched, x)
	}
	token := *d.InvocationToken
	// Robin may have lost the thread since the page was read (revoked mid-session): then
	// getInvocation and ackInvocation are 404 and the worker gives up.
	status := http.StatusOK
	if !p.readable(x.kind) {
		status = http.StatusNotFound
	}
	// The worker's way of being idempotent, drawn afresh at every handling (as after a
	// restart with another version): an Idempotency-Key derived from the invocation id on the
	// reply, getInvocation first (skip an answered one), both, or neither; in every case a 409
	// on the reply means answered already, which is success (ADR 0031).
	keyed, checks := p.r.IntN(2) == 0, p.r.IntN(2) == 0
	if checks {
		g := p.getInvocation(t, p.Robin, x.id, status)
		if status != http.StatusOK {
			p.stats.gaveUp++
			p.handled(s, d.Seq, passedGaveUp)
			return true
		}
		if g.State != x.state || g.Attempt != x.attempt {
			t.Fatalf("getInvocation %s = %+v, the model says %s attempt %d", x.id, g, x.state, x.attempt)
		}
		if g.State == apigen.InvocationStateAnswered {
			p.stats.skipped++
			p.handled(s, d.Seq, passedProcessed)
			return true
		}
		if p.dies(s) {
			return false
		}
	}
	if p.r.IntN(2) == 0 {
		g := p.ackInvocation(t, p.Robin, x.id, token, status)
		if status != http.StatusOK {
			p.stats.gaveUp++
			p.handled(s, d.Seq, passedGaveUp)
			return true
		}
		if x.state == apigen.InvocationStatePending {
			x.state = apigen.InvocationStateAcknowledged
		}
		if g.State != x.state || g.Attempt != x.attempt {
			t.Fatalf("ackInvocation %s = %+v, the model says %s attempt %d", x.id, g, x.state, x.attempt)
		}
		if p.dies(s) {
			return false
		}
	}
	if s.mayRevoke && x.kind == ticketsThread && p.granted && p.r.IntN(3) == 0 {
		// Robin loses the thread while it answers.
		p.Revoke(t, p.robinGrant)
		p.granted, s.changed = false, true
		p.stats.revokedMidAnswer++
	}
	var header []string
	if keyed {
		header = []string{"Idempotency-Key", "robin-reply-" + x.id.String()}
	}
	body := fmt.Sprintf(`{"content_md":%q,"invocation_token":%q}`, replyText(x.id), token)
	r := p.Do(t, p.Robin, http.MethodPost, "/api/v1/threads/"+x.thread.String()+"/messages", body, header...)
	switch {
	case keyed && x.keyStored:
		var m apigen.Message
		if r.Status != http.StatusCreated || r.Header.Get("Idempotency-Replayed") != "true" {
			t.Fatalf("a repeated reply to %s with its Idempotency-Key = %d (replayed %q); body %s", x.id, r.Status, r.Header.Get("Idempotency-Replayed"), r.Body)
		}
		r.JSON(t, &m)
		p.stats.replayed++
		if m.Id != x.reply {
			t.Fatalf("the replayed reply to %s is %s, the first was %s", x.id, m.Id, x.reply)
		}
	case !p.readable(x.kind):
		r.RequireProblem(t, http.StatusNotFound, e2etest.NotFound)
		p.stats.gaveUp++
		p.handled(s, d.Seq, passedGaveUp)
		return true
	case x.state == apigen.InvocationStateAnswered:
		r.RequireProblem(t, http.StatusConflict, e2etest.Conflict)
		p.stats.conflicts++
	default:
		var m apigen.Message
		if r.Status != http.StatusCreated || r.Header.Get("Idempotency-Replayed") != "" {
			t.Fatalf("the reply to %s (state %s) = %d (replayed %q); body %s", x.id, x.state, r.Status, r.Header.Get("Idempotency-Replayed"), r.Body)
		}
		r.JSON(t, &m)
		if m.InvocationId == nil || *m.InvocationId != x.id {
			t.Fatalf("the reply to %s is linked to %v", x.id, m.InvocationId)
		}
		x.state, x.reply, x.keyStored = apigen.InvocationStateAnswered, m.Id, keyed
		p.stats.replies++
	}
	if p.dies(s) {
		return false // killed after the reply, before the consumer's ack
	}
	p.handled(s, d.Seq, passedProcessed)
	return true
}

// handled records that the worker handled the delivery seq in session s; a delivery processed
// once stays processed (then its invocation is answered).
func (p *invProp) handled(s *propSession, seq int64, why passReason) {
	s.handled[seq] = why
	if p.handledAll[seq] != passedProcessed {
		p.handledAll[seq] = why
	}
}

// settle takes the consumer's acked_seq after session s: it moved only to an ack the worker
// sent, never back, and passed only deliveries the worker handled (in this session or an
// earlier one); an invocation.requested it passed that the worker never handled must have been
// hidden from Robin during the session.
func (p *invProp) settle(t *testing.T, s *propSession, acked int64) {
	t.Helper()
	if acked == p.acked {
		return
	}
	if acked < p.acked || !slices.Contains(s.acks, acked) {
		t.Fatalf("acked_seq moved from %d to %d; the worker sent %v", p.acked, acked, s.acks)
	}
	for _, seq := range s.delivered {
		if _, ok := p.handledAll[seq]; seq > p.acked && seq <= acked && !ok {
			t.Fatalf("the consumer passed seq %d (acked_seq %d) before the worker handled it", seq, acked)
		}
	}
	for _, x := range p.order {
		for _, seq := range x.events {
			if seq <= p.acked || seq > acked {
				continue
			}
			if why, ok := p.handledAll[seq]; ok {
				x.passed[seq] = why
				continue
			}
			if x.kind != ticketsThread || s.granted && !s.changed {
				t.Fatalf("the consumer passed delivery seq %d of invocation %s, which Robin could read, without the worker handling it", seq, x.id)
			}
			x.passed[seq] = passedHidden
			p.stats.hidden++
		}
	}
	p.acked = acked
}

// checkReplies reads the invocation's thread as its invoker: at most one reply to it, exactly
// one (the accepted one) once answered.
func (p *invProp) checkReplies(t *testing.T, x *propInvocation) {
	t.Helper()
	var found []apigen.Message
	msgs := p.Messages(t, x.invoker, x.thread)
	if len(msgs) >= 100 {
		t.Fatalf("thread %s has %d messages, more than one page of chat.messages_page_size", x.thread, len(msgs))
	}
	for _, m := range msgs {
		if m.InvocationId != nil && *m.InvocationId != x.id && m.ContentMd == replyText(x.id) {
			t.Fatalf("the reply to %s is linked to %s", x.id, *m.InvocationId)
		}
		if m.ContentMd == replyText(x.id) || m.InvocationId != nil && *m.InvocationId == x.id {
			found = append(found, m)
		}
	}
	answered := x.state == apigen.InvocationStateAnswered
	switch {
	case len(found) > 1:
		t.Fatalf("invocation %s has %d replies in its thread", x.id, len(found))
	case answered && (len(found) != 1 || found[0].Id != x.reply || found[0].AuthorId != p.Robin.ID):
		t.Fatalf("invocation %s is answered by %s; %s reads %+v in the thread", x.id, x.reply, x.invoker.Name, found)
	case !answered && len(found) != 0:
		t.Fatalf("invocation %s (%s) has a reply %+v", x.id, x.state, found)
	}
}

// finish gives the grant back and lets a worker that is never killed drain the consumer while
// the sweeper redelivers what is pending, until nothing is; then checks every invocation and
// every reader.
func (p *invProp) finish(t *testing.T) {
	t.Helper()
	if !p.granted {
		p.toggleGrant(t)
	}
	for round := 0; ; round++ {
		p.session(t, false, false)
		p.checkLog(t, invocationSteps+round)
		pending := slices.ContainsFunc(p.order, func(x *propInvocation) bool { return x.state == apigen.InvocationStatePending })
		if !pending {
			break
		}
		if round > 2*invMaxDeliveries {
			t.Fatal("invocations are still pending after the final rounds")
		}
		p.sweep(t, invAckTimeout)
	}
	p.session(t, false, true) // REST drains to the head, past the replies' own events
	if p.acked != p.Head(t) {
		t.Fatalf("after the final drain acked_seq %d, head %d", p.acked, p.Head(t))
	}

	// Every invocation: answered, unless none of its deliveries could reach the worker or
	// the reply was refused because Robin lost the thread; as the model says.
	answered, failed := 0, 0
	for _, x := range p.order {
		if x.state == apigen.InvocationStateAnswered {
			answered++
		} else {
			for _, seq := range x.events {
				if why := x.passed[seq]; why != passedHidden && why != passedGaveUp {
					t.Fatalf("invocation %s (%s) is unanswered though its delivery seq %d was passed with %d", x.id, x.state, seq, why)
				}
			}
		}
		if x.everFailed {
			failed++
		}
		if len(x.passed) != len(x.events) {
			t.Fatalf("invocation %s: %d deliveries, %d passed by the consumer", x.id, len(x.events), len(x.passed))
		}
		if g := p.getInvocation(t, x.invoker, x.id, http.StatusOK); g.State != x.state || g.Attempt != x.attempt {
			t.Fatalf("getInvocation %s as %s = %+v, the model says %s attempt %d", x.id, x.invoker.Name, g, x.state, x.attempt)
		}
		// The other person, a reader of the thread or not, gets 404.
		other := p.Sam
		if x.invoker == p.Sam {
			other = p.Alex
		}
		p.getInvocation(t, other, x.id, http.StatusNotFound)
		p.checkReplies(t, x)
	}
	st := p.stats
	t.Logf("%d invocations: %d answered, %d failed at some point; %d deliveries to the worker in %d sessions (%d killed, %d with a live round); "+
		"replies: %d accepted, %d replayed, %d conflicts, %d skipped after getInvocation, %d given up (%d revoked mid-answer); %d deliveries passed hidden",
		len(p.order), answered, failed, p.deliveries(), st.sessions, st.killed, st.live,
		st.replies, st.replayed, st.conflicts, st.skipped, st.gaveUp, st.revokedMidAnswer, st.hidden)

	// Robin's own catch-up from the start: every invocation.requested with its token and
	// redelivered as the attempt says, nothing else with either.
	requested, failedTo := 0, map[uuid.UUID]int{}
	for _, d := range p.robinCatchUp(t) {
		p.checkDelivery(t, d)
		switch d.Type {
		case "invocation.requested":
			requested++
		case "invocation.failed":
			var inv apigen.Invocation
			if err := json.Unmarshal(d.Payload, &inv); err != nil {
				t.Fatalf("invocation.failed payload: %v", err)
			}
			failedTo[inv.Id]++
		}
	}
	if requested != p.storedDeliveries() {
		t.Fatalf("Robin's catch-up from the start has %d invocation.requested, the log %d (all readable now)", requested, p.storedDeliveries())
	}
	for _, x := range p.order {
		want := 0
		if x.everFailed {
			want = 1
		}
		if failedTo[x.id] != want {
			t.Fatalf("Robin's catch-up has %d invocation.failed for %s (ever failed %v)", failedTo[x.id], x.id, x.everFailed)
		}
	}

	// The people: no invocation.requested, no delivery-only member, invocation.failed for
	// the invocations they made that failed; the same on the gateway and in the snapshot.
	for _, who := range []e2etest.Actor{p.Alex, p.Sam} {
		ds := p.restDeliveries(t, who, p.start)
		p.checkPerson(t, who, ds, "catch-up")
		head := p.Head(t)
		c := e2etest.MustDial(t, p.Env.Server.URL, who.Token)
		c.Send(fmt.Sprintf(`{"op":"resume","after":%d}`, p.start))
		gw := gatewayDeliveries(t, c, head)
		_ = c.Conn.Close(websocket.StatusNormalClosure, "")
		p.checkPerson(t, who, gw, "gateway catch-up")
	}
	for _, who := range []e2etest.Actor{p.Alex, p.Sam, p.Robin} {
		p.checkSnapshot(t, who)
	}
}

// robinCatchUp is ListEvents as Robin from the start to the head.
func (p *invProp) robinCatchUp(t *testing.T) []propDelivery {
	t.Helper()
	var out []propDelivery
	after := p.start
	for range 1000 {
		var page struct {
			Events     []propDelivery `json:"events"`
			NextCursor int64          `json:"next_cursor"`
			HeadSeq    int64          `json:"head_seq"`
		}
		p.Must(t, p.Robin, http.MethodGet, fmt.Sprintf("/api/v1/events?after=%d", after), "", http.StatusOK, &page)
		out = append(out, page.Events...)
		if page.NextCursor == page.HeadSeq {
			return out
		}
		after = page.NextCursor
	}
	t.Fatal("Robin's catch-up did not reach the head")
	return nil
}

// storedDeliveries is how many invocation.requested the log holds.
func (p *invProp) storedDeliveries() int {
	n := 0
	for _, x := range p.order {
		n += len(x.events)
	}
	return n
}

// checkPerson checks what a person got: no invocation.requested and no delivery-only member;
// exactly one invocation.failed for each invocation of theirs that failed, none for others.
func (p *invProp) checkPerson(t *testing.T, who e2etest.Actor, ds []delivered, how string) {
	t.Helper()
	requireNoDeliveryOnly(t, who.Name+"'s "+how, ds)
	if n := len(ofType(ds, "invocation.requested")); n != 0 {
		t.Fatalf("%s's %s has %d invocation.requested", who.Name, how, n)
	}
	got := map[uuid.UUID]int{}
	for _, d := range ofType(ds, "invocation.failed") {
		got[d.invocation(t).Id]++
	}
	for _, x := range p.order {
		want := 0
		if x.everFailed && x.invoker.ID == who.ID {
			want = 1
		}
		if got[x.id] != want {
			t.Fatalf("%s's %s has %d invocation.failed for %s (by %s, ever failed %v), want %d", who.Name, how, got[x.id], x.id, x.invoker.Name, x.everFailed, want)
		}
		delete(got, x.id)
	}
	if len(got) != 0 {
		t.Fatalf("%s's %s has invocation.failed for unknown invocations %v", who.Name, how, got)
	}
}

// deliveries is how many invocation.requested the worker got in all.
func (p *invProp) deliveries() int {
	n := 0
	for _, x := range p.order {
		n += x.seen
	}
	return n
}
