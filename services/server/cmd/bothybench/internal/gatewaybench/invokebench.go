package gatewaybench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	"bothy.example.com/server/internal/wire"
)

// The invocation delivery case (ADR 0031): agents connected to the gateway, a person who
// invokes them by mentioning them, and the time from the post's commit to the agent's receipt
// of its invocation.requested frame, beside the bare NOTIFY round trip of the same window.

const (
	// InvAgents is how many agents are connected, each invoked in turn.
	InvAgents = 100
	// InvRate is the invocations per second (one post mentioning one agent each).
	InvRate = 50
	// invPosters is how many goroutines share the paced posts, so that one slow commit does
	// not hold the next post back (as many as the postMessage case's clients).
	invPosters = 16
	// invDatabase prefixes the name of the case's database.
	invDatabase = "bothy_invoke"
	// invTokenMark is how the delivery-only invocation_token starts in an event frame: the
	// client checks that every invocation.requested it receives carries one.
	invTokenMark = `,"invocation_token":"`
	// invRequested is the event type an invocation is delivered as.
	invRequested = "invocation.requested"
	// invPageSize is how many events one read of the log's window takes.
	invPageSize = 1000
	// invRoundTripEvery paces the bare NOTIFY round trips: 200 per second give the baseline
	// about a thousand samples in a 5 s window (its p99 stands on ten) without the probe
	// becoming a load of its own; run back to back, it made about 5,000 round trips a second,
	// as much work for the database as the case's posts and deliveries together.
	invRoundTripEvery = 5 * time.Millisecond
)

// InvokeResult is the invocation delivery case, in milliseconds.
type InvokeResult struct {
	Agents        int     `json:"agents"`
	Posters       int     `json:"posters"`
	RequestedRate int     `json:"requested_rate"`
	AchievedRate  float64 `json:"achieved_rate"`
	Skipped       int64   `json:"skipped_ticks"`
	// Invocations is how many invocations were committed in the window, Deliveries how many
	// of them reached their agent's connection, Missing how many did not.
	Invocations int    `json:"invocations"`
	Deliveries  int    `json:"deliveries"`
	Missing     int    `json:"missing"`
	DrainError  string `json:"drain_error,omitempty"`
	// WithoutToken is how many delivered invocation.requested frames lacked the
	// invocation_token, Misaddressed how many invocation.requested frames reached an agent
	// they were not for; both must be 0.
	WithoutToken int `json:"without_token"`
	Misaddressed int `json:"misaddressed"`
	// OtherFrames is how many other event frames the agents received in the run, warm-up
	// included (the message.created of every post, which every agent may read), and
	// OtherWithToken how many of them carried an invocation_token (must be 0: the member is
	// the invocation's alone).
	OtherFrames    int `json:"other_frames"`
	OtherWithToken int `json:"other_with_token"`
	// BusyCores, ServerCores and ClientCores are as in gatewayLatency.
	BusyCores     float64 `json:"busy_cores"`
	ServerCores   float64 `json:"server_cores"`
	ClientCores   float64 `json:"client_cores"`
	BareSamples   int     `json:"bare_samples"`
	P50Ms         float64 `json:"p50_ms"`
	P99Ms         float64 `json:"p99_ms"`
	BareP50Ms     float64 `json:"bare_p50_ms"`
	BareP99Ms     float64 `json:"bare_p99_ms"`
	IdleBareP50Ms float64 `json:"idle_bare_p50_ms"`
	IdleBareP99Ms float64 `json:"idle_bare_p99_ms"`
	// HotBareP50Ms and HotBareP99Ms are the bare round trip without load, each starting as the
	// last returned (the form the baseline had before it was paced), for comparison.
	HotBareP50Ms float64 `json:"hot_bare_p50_ms"`
	HotBareP99Ms float64 `json:"hot_bare_p99_ms"`
	P50Ratio     float64 `json:"p50_ratio"`
	P99Ratio     float64 `json:"p99_ratio"`
	// BatchWindow is gateway.batch_window of the measured App.
	BatchWindow string `json:"batch_window"`
}

// invAgent is one agent of the case and the thread it is invoked in.
type invAgent struct {
	id     uuid.UUID
	handle string
	token  string
	thread uuid.UUID
}

// invokeCase wires an App with the api and gateway roles (no maintenance role: no sweeper
// redelivers an invocation during the run) on a database of its own, serves it on
// 127.0.0.1:0, builds the gateway world (Alex, Sam with a member grant on the channel, a
// thread) and o.invAgents agents over HTTP, each with a member grant on the channel, a token
// and a thread, and measures the invocation delivery latency.
func invokeCase(ctx context.Context, o bench.Options, url string, logger *slog.Logger, progress func(string, ...any)) (res InvokeResult, err error) {
	ga, err := startGatewayApp(ctx, url, invDatabase, "invoke", logger)
	if err != nil {
		return res, err
	}
	app, base, dbURL, cfg := ga.app, ga.base, ga.dbURL, ga.cfg
	defer func() {
		if serr := ga.stop(); serr != nil && err == nil {
			err = serr
		}
	}()

	progress("invoke: Alex, Sam, a space, a channel and %d agents with member grants and a thread each over HTTP", o.InvAgents)
	w, err := setUpGatewayWorld(ctx, app, base)
	if err != nil {
		return res, err
	}
	w.dbURL = dbURL
	agents, err := createAgents(ctx, w, o.InvAgents)
	if err != nil {
		return res, err
	}
	progress("invoke: Sam invokes %d connected agents in turn, %d invocations/s", o.InvAgents, o.InvRate)
	if res, err = invokeLatency(ctx, w, agents, o); err != nil {
		return res, err
	}
	res.BatchWindow = gateway.ConfigFrom(cfg).BatchWindow.String()
	return res, nil
}

// createAgents creates n agents over HTTP as Alex (agent001, agent002 and so on), gives each a
// member grant on the world's channel, issues a token for it and creates a thread of the
// channel to invoke it in: posts to one thread take its lock one after the other, commit
// included, which would cap the rate at one post per commit.
func createAgents(ctx context.Context, w *gatewayWorld, n int) ([]invAgent, error) {
	owner, err := w.app.Ports().Tokens.Issue(ctx, w.alex, nil)
	if err != nil {
		return nil, fmt.Errorf("invoke: a token for Alex: %w", err)
	}
	token := owner.Token.Reveal()
	c := bench.NewPostClient()
	defer c.CloseIdleConnections()
	create := func(what, path string, body any) (uuid.UUID, error) {
		id, err := bench.CreateID(ctx, c, w.base+path, token, body)
		if err != nil {
			return uuid.Nil, fmt.Errorf("invoke: create %s: %w", what, err)
		}
		return id, nil
	}
	agents := make([]invAgent, n)
	for i := range agents {
		a := &agents[i]
		a.handle = fmt.Sprintf("agent%03d", i+1)
		if a.id, err = create("agent "+a.handle, "/api/v1/agents", map[string]string{
			"display_name": fmt.Sprintf("Agent %03d", i+1), "handle": a.handle, "description": "Answers when asked.",
		}); err != nil {
			return nil, err
		}
		if _, err := create("the grant of "+a.handle, "/api/v1/grants", map[string]string{
			"principal_id": a.id.String(), "resource_kind": "channel", "resource_id": w.channel.String(), "role": "member",
		}); err != nil {
			return nil, err
		}
		issued, err := w.app.Ports().Tokens.Issue(ctx, a.id, nil)
		if err != nil {
			return nil, fmt.Errorf("invoke: token for %s: %w", a.handle, err)
		}
		a.token = issued.Token.Reveal()
		if a.thread, err = create("the thread of "+a.handle, "/api/v1/channels/"+w.channel.String()+"/threads", map[string]string{
			"title": "Questions for " + a.handle, "content_md": bench.PostContent,
		}); err != nil {
			return nil, err
		}
	}
	return agents, nil
}

// invokeLatency connects the agents (the i-th connection is agents[i]'s, in a client process,
// hello and ready: resumed from the head) and has Sam post o.invRate messages per second, the
// k-th mentioning agents[k mod n] in that agent's thread, through the App's chat use case in this process
// (wire.App.Messages, as postMessage runs it: the message, its invocation and their events in
// one transaction), o.invPosters goroutines sharing the paced posts. A sample is one
// invocation committed in the measured window: from the moment its post returned (Post
// returns as soon as its RunInTx has committed) to the moment the agent's client had read the
// invocation.requested frame, both on the clock of gatewayLatencyCase (the wall clock read
// once per process, the monotonic clock after). Beside it, in the same window and under the
// same load, the bare LISTEN/NOTIFY round trip; and once before any load, idle.
func invokeLatency(ctx context.Context, w *gatewayWorld, agents []invAgent, o bench.Options) (r InvokeResult, err error) {
	listen, err := bench.Connect(ctx, w.dbURL)
	if err != nil {
		return r, err
	}
	defer func() { _ = listen.Close(context.WithoutCancel(ctx)) }()
	notify, err := bench.Connect(ctx, w.dbURL)
	if err != nil {
		return r, err
	}
	defer func() { _ = notify.Close(context.WithoutCancel(ctx)) }()
	if _, err := listen.Exec(ctx, "LISTEN "+bench.RttChannel); err != nil {
		return r, fmt.Errorf("listen: %w", err)
	}
	idle, err := bench.RoundTrips(ctx, listen, notify, min(o.Duration, 2*time.Second), invRoundTripEvery)
	if err != nil {
		return r, fmt.Errorf("idle round trips: %w", err)
	}
	hot, err := bench.RoundTrips(ctx, listen, notify, min(o.Duration, 2*time.Second), 0)
	if err != nil {
		return r, fmt.Errorf("back to back round trips: %w", err)
	}

	tokens := make([]string, len(agents))
	agentIndex := make(map[uuid.UUID]int, len(agents))
	for i, a := range agents {
		tokens[i], agentIndex[a.id] = a.token, i
	}
	clients, err := startClientProc(ctx, clientSpec{URL: w.ws, Tokens: tokens, N: len(agents), Record: true, Mark: invTokenMark})
	if err != nil {
		return r, fmt.Errorf("invoke: %w", err)
	}
	defer func() { _, _ = clients.stop() }()
	k := newClock(time.Now())
	from, err := w.app.Versions().EventSeq(ctx)
	if err != nil {
		return r, fmt.Errorf("invoke: head: %w", err)
	}

	asSam := actor.With(context.WithoutCancel(ctx), actor.Actor{PrincipalID: w.people[0], Kind: actor.KindPerson})
	messages := w.app.Ports().Messages
	loadCtx, stopLoad := context.WithCancel(ctx)
	posts := startPosts(loadCtx, o.InvRate, invPosters, func(n int64) (uuid.UUID, error) {
		a := agents[n%int64(len(agents))]
		m, err := messages.Post(asSam, chat.MessageInput{ThreadID: a.thread, ContentMD: "@" + a.handle + " " + invokeContent})
		return m.ID, err
	})
	if !bench.SleepCtx(ctx, o.Warmup) {
		stopLoad()
		_, _ = posts.wait()
		return r, ctx.Err()
	}
	stopProfile := func() {}
	if dir := os.Getenv(invokeProfileEnv); dir != "" {
		if stopProfile, err = profileWindow(dir, clients); err != nil {
			stopLoad()
			_, _ = posts.wait()
			return r, err
		}
	}
	committedBefore, cpu := posts.committed.Load(), sampleCPU(clients.pid())
	began := time.Now()
	bare, rttErr := bench.RoundTrips(ctx, listen, notify, o.Duration, invRoundTripEvery)
	ended := time.Now()
	use := cpu.use(sampleCPU(clients.pid()))
	stopProfile()
	committed := posts.committed.Load() - committedBefore
	stopLoad()
	skipped, loadErr := posts.wait()
	if err := errors.Join(rttErr, loadErr); err != nil {
		return r, err
	}
	head, err := w.app.Versions().EventSeq(ctx)
	if err != nil {
		return r, fmt.Errorf("invoke: head: %w", err)
	}
	invs, err := invocationsIn(ctx, w.app, from, head, agentIndex)
	if err != nil {
		return r, err
	}
	// Every agent's connection has received its last invocation once its last frame's seq
	// reached it: a connection receives its events in seq order.
	last := make([]int64, len(agents))
	for _, inv := range invs {
		last[inv.agent] = max(last[inv.agent], inv.seq)
	}
	drainErr := drainInvocations(ctx, clients.slots, last)
	got, err := clients.stop()
	if err != nil {
		return r, fmt.Errorf("invoke: %w", err)
	}
	if len(got.Seqs) != len(agents) || len(got.Marked) != len(agents) {
		return r, fmt.Errorf("invoke: the client process recorded %d connections, want %d", len(got.Seqs), len(agents))
	}

	r = InvokeResult{
		Agents: len(agents), Posters: invPosters, RequestedRate: o.InvRate,
		AchievedRate: bench.Round1(float64(committed) / ended.Sub(began).Seconds()), Skipped: skipped,
		BusyCores: use.All, ServerCores: use.Server, ClientCores: use.Clients, BareSamples: len(bare),
	}
	if drainErr != nil {
		r.DrainError = drainErr.Error()
	}
	// The invocations of the window, by seq: their agent and their post's commit on k.
	type window struct {
		agent  int
		commit int64
	}
	inWindow := map[int64]window{}
	bySeq := make(map[int64]int, len(invs))
	for _, inv := range invs {
		bySeq[inv.seq] = inv.agent
		if at, ok := posts.commits[inv.message]; ok && !at.Before(began) && at.Before(ended) {
			inWindow[inv.seq] = window{agent: inv.agent, commit: k.at(at)}
		}
	}
	var samples []time.Duration
	for i, seqs := range got.Seqs {
		for j, seq := range seqs {
			agent, isInvocation := bySeq[seq]
			switch {
			case !isInvocation:
				r.OtherFrames++
				if got.Marked[i][j] {
					r.OtherWithToken++
				}
				continue
			case agent != i:
				r.Misaddressed++
				continue
			case !got.Marked[i][j]:
				r.WithoutToken++
			}
			if inv, ok := inWindow[seq]; ok {
				samples = append(samples, time.Duration(max(got.Ats[i][j]-inv.commit, 0)))
			}
		}
	}
	r.Invocations, r.Deliveries = len(inWindow), len(samples)
	r.Missing = r.Invocations - r.Deliveries
	if len(samples) == 0 || len(bare) == 0 {
		return r, errors.New("invoke: no samples: no invocation was delivered in the measured window")
	}
	r.P50Ms, r.P99Ms = bench.Ms(bench.Percentile(samples, 50)), bench.Ms(bench.Percentile(samples, 99))
	r.BareP50Ms, r.BareP99Ms = bench.Ms(bench.Percentile(bare, 50)), bench.Ms(bench.Percentile(bare, 99))
	r.IdleBareP50Ms, r.IdleBareP99Ms = bench.Ms(bench.Percentile(idle, 50)), bench.Ms(bench.Percentile(idle, 99))
	r.HotBareP50Ms, r.HotBareP99Ms = bench.Ms(bench.Percentile(hot, 50)), bench.Ms(bench.Percentile(hot, 99))
	r.P50Ratio, r.P99Ratio = bench.Round2(r.P50Ms/r.BareP50Ms), bench.Round2(r.P99Ms/r.BareP99Ms)
	return r, nil
}

// invokeProfileEnv, when set to a directory, has the invocation case write CPU profiles of its
// measured window there, as gatewayProfileEnv does for the gateway's latency case:
// server.pprof (the benchmark's process) and clients.pprof (the client process).
const invokeProfileEnv = "BOTHYBENCH_INVOKE_PROFILE"

// invokeContent follows the mention of every post of the case.
const invokeContent = "can you summarise the deploy log of the new build?"

// invocationEvent is one invocation.requested of the log: its seq, its agent (an index into
// the case's agents) and the message that made it.
type invocationEvent struct {
	seq     int64
	agent   int
	message uuid.UUID
}

// invocationsIn reads the invocation.requested events of the log with a seq in (from, head]
// through the App's reader; it fails on one for an agent the case does not know.
func invocationsIn(ctx context.Context, app *wire.App, from, head int64, agents map[uuid.UUID]int) ([]invocationEvent, error) {
	var out []invocationEvent
	for after := from; after < head; {
		page, err := app.EventsAfter(ctx, after, invPageSize)
		if err != nil {
			return nil, fmt.Errorf("invoke: read the log: %w", err)
		}
		if len(page) == 0 {
			break
		}
		for _, e := range page {
			after = e.Seq
			if e.Seq > head || e.Type != invRequested {
				continue
			}
			var p struct {
				AgentID   uuid.UUID `json:"agent_id"`
				MessageID uuid.UUID `json:"message_id"`
			}
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				return nil, fmt.Errorf("invoke: payload of seq %d: %w", e.Seq, err)
			}
			i, ok := agents[p.AgentID]
			if !ok {
				return nil, fmt.Errorf("invoke: seq %d invokes %s, not an agent of the case", e.Seq, p.AgentID)
			}
			out = append(out, invocationEvent{seq: e.Seq, agent: i, message: p.MessageID})
		}
	}
	return out, nil
}

// drainInvocations waits until the i-th connection's last frame has a seq of at least last[i]
// (0: nothing to wait for), or the connection ended, at most gwDrainTimeout; it reports the
// connections that did not get there.
func drainInvocations(ctx context.Context, slots []clientSlot, last []int64) error {
	deadline := time.Now().Add(gwDrainTimeout)
	for {
		behind, ended := 0, 0
		for i := range slots {
			switch {
			case slots[i].ended.Load() != 0:
				ended++
			case slots[i].lastSeq.Load() < last[i]:
				behind++
			}
		}
		switch {
		case behind == 0 && ended == 0:
			return nil
		case behind == 0:
			return fmt.Errorf("%d connections ended before their last invocation: %w", ended, slotFailure(slots))
		case time.Now().After(deadline):
			return fmt.Errorf("%d connections had not received their last invocation after %v, %d ended", behind, gwDrainTimeout, ended)
		}
		if !bench.SleepCtx(ctx, 5*time.Millisecond) {
			return ctx.Err()
		}
	}
}

// invokeLoad paces posts at a fixed rate, like load paces appends.
type invokeLoad struct {
	committed atomic.Int64
	skipped   atomic.Int64
	wg        gosync.WaitGroup
	mu        gosync.Mutex
	err       error
	commits   map[uuid.UUID]time.Time // message id -> when its post returned; read after wait
}

// startPosts sends rate jobs per second, numbered from 0, to posters goroutines, each job one
// call of post (which returns the message's id once its transaction committed); a tick that
// finds every poster busy and the queue full is skipped (and counted) and its number taken by
// the next tick, so the round-robin stays whole.
func startPosts(ctx context.Context, rate, posters int, post func(n int64) (uuid.UUID, error)) *invokeLoad {
	l := &invokeLoad{commits: map[uuid.UUID]time.Time{}}
	jobs := make(chan int64, rate)
	for range posters {
		l.wg.Go(func() {
			for n := range jobs {
				id, err := post(n)
				committed := time.Now()
				l.mu.Lock()
				if err != nil && l.err == nil {
					l.err = err
				}
				if err == nil {
					l.commits[id] = committed
				}
				l.mu.Unlock()
				if err == nil {
					l.committed.Add(1)
				}
			}
		})
	}
	l.wg.Go(func() {
		defer close(jobs)
		interval := time.Second / time.Duration(rate)
		next := time.Now()
		var n int64
		for {
			next = next.Add(interval)
			if !bench.SleepCtx(ctx, time.Until(next)) {
				return
			}
			select {
			case jobs <- n:
				n++
			default:
				l.skipped.Add(1)
			}
		}
	})
	return l
}

// wait waits for the pacer (stopped through its context) and the posters, and returns the
// skipped ticks and the first post error.
func (l *invokeLoad) wait() (int64, error) {
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.skipped.Load(), l.err
}
