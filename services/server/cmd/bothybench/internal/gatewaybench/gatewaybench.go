package gatewaybench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	syncapp "bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/wire"
)

// The sizes of the gateway cases; options carries them so the smoke test can take
// fewer.
const (
	// GwLatencyConns is how many connections receive every event in the latency case.
	GwLatencyConns = 1000
	// GwRate is the events per second (one per transaction) of the latency case.
	GwRate = 500
	// GwFanoutConns is how many connections the fan-out case and its baseline serve.
	GwFanoutConns = 5000
	// GwIdleConns is how many idle connections the memory case opens.
	GwIdleConns = 5000
)

const (
	// gwEventsPerTx is the events of one transaction of the fan-out case's writer.
	gwEventsPerTx = 10
	// gwWindow is how many of its transactions the fan-out writer lets be on their way to the
	// slowest connection: enough to keep every connection busy, far fewer than
	// gateway.send_buffer batches, so no connection falls behind by design.
	gwWindow = 8
	// gwHeartbeat is gateway.heartbeat_interval in these cases: longer than any run, so no
	// heartbeat frame or ping is written or counted, and idle connections stay idle.
	gwHeartbeat = time.Hour
	// gwDrainTimeout bounds the wait for the last events to reach every connection.
	gwDrainTimeout = 60 * time.Second
	// gwStallTimeout fails the fan-out case when the slowest connection receives nothing
	// for this long.
	gwStallTimeout = 30 * time.Second
	// gwDatabase prefixes the name of the gateway cases' database.
	gwDatabase = "bothy_gateway"
)

// gatewayWorld is the served App of the gateway cases and what they created in it: Alex (the
// owner) and, with a member grant on one channel, Sam and Robin, whose tokens the
// connections use in turn; events are messages in one thread of that channel, written as
// Alex, so every connection receives every event.
type gatewayWorld struct {
	app        *wire.App
	dbURL      string
	base       string // http://127.0.0.1:port
	ws         string // ws://127.0.0.1:port/api/v1/gateway
	alex       uuid.UUID
	tokens     []string    // Sam's and Robin's
	people     []uuid.UUID // Sam and Robin
	space      uuid.UUID
	channel    uuid.UUID
	thread     uuid.UUID
	sendBuffer int
	batchSize  int
}

// gatewayCases wires an App with the api and gateway roles on a database of its own (created
// on the cluster of url and dropped afterwards), serves it on 127.0.0.1:0 (which runs its log
// tail), builds the gateway world over HTTP, and measures the idle memory per connection, the
// commit-to-frame latency and the fan-out.
func gatewayCases(ctx context.Context, o bench.Options, url string, logger *slog.Logger, progress func(string, ...any)) (res GatewayResult, err error) {
	ga, err := startGatewayApp(ctx, url, gwDatabase, "gateway", logger)
	if err != nil {
		return res, err
	}
	app, base, dbURL, cfg := ga.app, ga.base, ga.dbURL, ga.cfg
	defer func() {
		if serr := ga.stop(); serr != nil && err == nil {
			err = serr
		}
	}()

	progress("gateway: Alex, Sam and Robin, a space, a channel, a thread and the grants over HTTP")
	w, err := setUpGatewayWorld(ctx, app, base)
	if err != nil {
		return res, err
	}
	w.dbURL = dbURL
	gwCfg := gateway.ConfigFrom(cfg)
	w.sendBuffer = gwCfg.SendBuffer
	res.BatchWindow = gwCfg.BatchWindow.String()
	w.batchSize = cfg.Int(syncapp.KeyTailBatchSize)
	res.SendBuffer, res.TailBatchSize, res.HeartbeatInterval, res.Cores = w.sendBuffer, w.batchSize, gwHeartbeat.String(), runtime.NumCPU()

	progress("gateway: memory of %d idle connections (their clients in a child process)", o.GwIdleConns)
	if res.Idle, err = gatewayIdleCase(ctx, w, o.GwIdleConns, o.Warmup); err != nil {
		return res, err
	}
	progress("gateway: commit-to-frame latency, %d connections, %d and then %d events/s", o.GwLatencyConns, max(1, o.GwRate/gwReferenceShare), o.GwRate)
	if res.Latency, res.LatencyReference, err = gatewayLatencyCase(ctx, w, o); err != nil {
		return res, err
	}
	progress("gateway: revocation delay, %d connections, every %dth token revoked, beside an ordinary event's delivery", o.GwLatencyConns, gwRevokeShare)
	if res.Revocation, err = gatewayRevocationCase(ctx, w, o); err != nil {
		return res, err
	}
	res.Revocation.MaxDelay = gwCfg.RevocationMaxDelay.String()
	progress("gateway: fan-out to %d connections, then the bare broadcast server", o.GwFanoutConns)
	if res.Fanout, err = gatewayFanoutCase(ctx, w, o); err != nil {
		return res, err
	}
	return res, nil
}

// gatewayApp is an App with the api and gateway roles on a scratch database of its own, served
// on a loopback port: the setup of the gateway and invocation cases.
type gatewayApp struct {
	app   *wire.App
	base  string         // the server's base URL
	dbURL string         // the scratch database
	cfg   *config.Config // the App's configuration
	// stop stops the server, closes the App and drops the database, in that order, and
	// returns the first error.
	stop func() error
}

// startGatewayApp starts a gatewayApp on a scratch database named after prefix, gateway
// heartbeats off (gwHeartbeat); name names it in errors.
func startGatewayApp(ctx context.Context, url, prefix, name string, logger *slog.Logger) (gatewayApp, error) {
	dbURL, drop, err := bench.ScratchDatabase(ctx, url, prefix)
	if err != nil {
		return gatewayApp{}, err
	}
	cfg, err := config.Load("", []string{
		config.DatabaseURL.EnvName() + "=" + dbURL,
		config.DatabaseMaxConns.EnvName() + "=" + strconv.Itoa(bench.MaxConns),
		gateway.KeyHeartbeatInterval.EnvName() + "=" + gwHeartbeat.String(),
	})
	if err != nil {
		return gatewayApp{}, errors.Join(fmt.Errorf("%s configuration: %w", name, err), drop())
	}
	app, err := wire.New(ctx, cfg, logger, wire.Options{Migrate: true, Roles: []string{wire.RoleAPI, wire.RoleGateway}})
	if err != nil {
		return gatewayApp{}, errors.Join(fmt.Errorf("%s wire: %w", name, err), drop())
	}
	base, stopServer, err := bench.ServeLocal(ctx, app, name)
	if err != nil {
		app.Close()
		return gatewayApp{}, errors.Join(err, drop())
	}
	stop := func() error {
		serr := stopServer()
		app.Close()
		if derr := drop(); serr == nil {
			serr = derr
		}
		return serr
	}
	return gatewayApp{app: app, base: base, dbURL: dbURL, cfg: cfg, stop: stop}, nil
}

// setUpGatewayWorld bootstraps Alex and creates, over HTTP as Alex, a space, a channel and a
// thread, Sam and Robin (with a token each) and their member grants on the channel.
func setUpGatewayWorld(ctx context.Context, app *wire.App, base string) (*gatewayWorld, error) {
	ownerID, ownerToken, err := app.Ports().Owners.Bootstrap(ctx, "Alex", "alex", "alex@example.com")
	if err != nil {
		return nil, fmt.Errorf("gateway: bootstrap the owner: %w", err)
	}
	w := &gatewayWorld{app: app, base: base, ws: "ws" + base[len("http"):] + gateway.Path, alex: ownerID}
	token := ownerToken.Reveal()
	c := bench.NewPostClient()
	defer c.CloseIdleConnections()
	create := func(what, path string, body any) (uuid.UUID, error) {
		id, err := bench.CreateID(ctx, c, base+path, token, body)
		if err != nil {
			return uuid.Nil, fmt.Errorf("gateway: create %s: %w", what, err)
		}
		return id, nil
	}
	if w.space, err = create("the space", "/api/v1/spaces", map[string]string{"name": "Gateway"}); err != nil {
		return nil, err
	}
	if w.channel, err = create("the channel", "/api/v1/spaces/"+w.space.String()+"/channels", map[string]string{"name": "live"}); err != nil {
		return nil, err
	}
	if w.thread, err = create("the thread", "/api/v1/channels/"+w.channel.String()+"/threads", map[string]string{"title": "Deploys", "content_md": bench.PostContent}); err != nil {
		return nil, err
	}
	for _, p := range []struct{ name, handle string }{{"Sam", "sam"}, {"Robin", "robin"}} {
		id, err := create(p.name, "/api/v1/people", map[string]string{"display_name": p.name, "handle": p.handle, "email": p.handle + "@example.com"})
		if err != nil {
			return nil, err
		}
		tok, err := app.Ports().Tokens.Issue(ctx, id, nil)
		if err != nil {
			return nil, fmt.Errorf("gateway: token for %s: %w", p.name, err)
		}
		w.tokens = append(w.tokens, tok.Token.Reveal())
		w.people = append(w.people, id)
		if _, err := create("the grant of "+p.name, "/api/v1/grants", map[string]string{
			"principal_id": id.String(), "resource_kind": "channel", "resource_id": w.channel.String(), "role": "member",
		}); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// events returns k message.created events in the world's thread, written by Alex, with a
// payload of the size newEvents gives.
func (w *gatewayWorld) events(k int) []kernel.Event {
	out := make([]kernel.Event, k)
	for i := range out {
		msg := ids.New()
		payload := fmt.Sprintf(`{"message_id":%q,"thread_id":%q,"channel_id":%q,"author_id":%q,"seq":%d,"content_md":%q,"created_at":"2025-01-02T03:04:05Z"}`,
			msg, w.thread, w.channel, w.alex, i+1, bench.PostContent)
		out[i] = kernel.Event{
			ID:           ids.New(),
			Type:         "message.created",
			ActorID:      w.alex,
			SpaceID:      w.space,
			ChannelID:    w.channel,
			ThreadID:     w.thread,
			ResourceKind: kernel.ResourceMessage,
			ResourceID:   msg,
			Payload:      json.RawMessage(payload),
		}
	}
	return out
}

// waitConnections waits until the gateway counts n open connections.
func (w *gatewayWorld) waitConnections(ctx context.Context, n int) error {
	gw := w.app.Gateway()
	deadline := time.Now().Add(gwDrainTimeout)
	for gw.Connections() != n {
		if time.Now().After(deadline) {
			return fmt.Errorf("gateway: %d connections open, want %d", gw.Connections(), n)
		}
		if !bench.SleepCtx(ctx, 10*time.Millisecond) {
			return ctx.Err()
		}
	}
	return nil
}

// gwReferenceShare divides the latency case's rate for its reference run: a load the
// machine sustains, for the latency of a gateway that is not behind.
const gwReferenceShare = 5

// gatewayLatencyCase measures commit-to-frame latency on o.gwLatencyConns connections (Sam's
// and Robin's in turn, after hello and ready), each receiving every event, in two runs on the
// same connections: first at a fifth of o.gwRate events per second (the reference), then at
// o.gwRate (the target's). In each, o.latWriter writers append the rate's events, one per
// transaction, through the App's appender (startLoad, as the tail latency case). A sample is
// one delivery: from the moment the writer's RunInTx returned to the moment a client had read
// the event's frame, for every event committed in the run's measured window and every
// connection. Beside it, in the same window and under the same load, the bare LISTEN/NOTIFY
// round trip (roundTrips) between two plain connections to the same database; and once before
// any load, idle.
func gatewayLatencyCase(ctx context.Context, w *gatewayWorld, o bench.Options) (target, reference gatewayLatency, err error) {
	listen, err := bench.Connect(ctx, w.dbURL)
	if err != nil {
		return target, reference, err
	}
	defer func() { _ = listen.Close(context.WithoutCancel(ctx)) }()
	notify, err := bench.Connect(ctx, w.dbURL)
	if err != nil {
		return target, reference, err
	}
	defer func() { _ = notify.Close(context.WithoutCancel(ctx)) }()
	if _, err := listen.Exec(ctx, "LISTEN "+bench.RttChannel); err != nil {
		return target, reference, fmt.Errorf("listen: %w", err)
	}
	idle, err := bench.RoundTrips(ctx, listen, notify, min(o.Duration, 2*time.Second), 0)
	if err != nil {
		return target, reference, fmt.Errorf("idle round trips: %w", err)
	}

	clients, err := startClientProc(ctx, clientSpec{URL: w.ws, Tokens: w.tokens, N: o.GwLatencyConns, Record: true})
	if err != nil {
		return target, reference, fmt.Errorf("gateway latency: %w", err)
	}
	defer func() { _, _ = clients.stop() }()
	k := newClock(time.Now())
	var runs []*latencyRun
	for _, rate := range []int{max(1, o.GwRate/gwReferenceShare), o.GwRate} {
		run, err := w.latencyRun(ctx, clients, listen, notify, o, rate)
		if err != nil {
			return target, reference, err
		}
		runs = append(runs, run)
	}
	got, err := clients.stop()
	if err != nil {
		return target, reference, fmt.Errorf("gateway latency: %w", err)
	}
	if len(got.Seqs) != o.GwLatencyConns {
		return target, reference, fmt.Errorf("gateway latency: the client process recorded %d connections, want %d", len(got.Seqs), o.GwLatencyConns)
	}
	if err := w.waitConnections(ctx, 0); err != nil {
		return target, reference, err
	}
	results := make([]gatewayLatency, len(runs))
	for i, run := range runs {
		if results[i], err = run.result(ctx, listen, got, k, idle); err != nil {
			return target, reference, err
		}
		results[i].Principals, results[i].Writers = len(w.tokens), o.LatWriter
	}
	return results[1], results[0], nil
}

// latencyRun is one run of the latency case, before its samples are matched.
type latencyRun struct {
	rate         int
	from, head   int64 // the events of the run are the seqs from+1 .. head
	began, ended time.Time
	committed    int64 // commits in the window
	skipped      int64
	acks         map[uuid.UUID]time.Time
	bare         []time.Duration
	cpu          cpuUse
	sched        schedWait
	drainErr     error
}

// latencyRun appends rate events per second for o.warmup and then o.duration, measuring the
// bare round trip in the window, and waits until every client has received the last event.
func (w *gatewayWorld) latencyRun(ctx context.Context, clients *clientProc, listen, notify *pgx.Conn, o bench.Options, rate int) (*latencyRun, error) {
	from, err := w.app.Versions().EventSeq(ctx)
	if err != nil {
		return nil, fmt.Errorf("gateway latency: head: %w", err)
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	load := bench.StartLoad(loadCtx, w.app, rate, o.LatWriter, func() []kernel.Event { return w.events(1) })
	if !bench.SleepCtx(ctx, o.Warmup) {
		stopLoad()
		_, _ = load.Wait()
		return nil, ctx.Err()
	}
	stopProfile := func() {}
	if dir := os.Getenv(gatewayProfileEnv); dir != "" && rate == o.GwRate {
		if stopProfile, err = profileWindow(dir, clients); err != nil {
			stopLoad()
			_, _ = load.Wait()
			return nil, err
		}
	}
	committedBefore, cpu, sched := load.Committed.Load(), sampleCPU(clients.pid()), sampleSched(clients.pid())
	run := &latencyRun{rate: rate, from: from, began: time.Now()}
	bare, rttErr := bench.RoundTrips(ctx, listen, notify, o.Duration, 0)
	run.ended = time.Now()
	run.cpu = cpu.use(sampleCPU(clients.pid()))
	run.sched = sched.wait(sampleSched(clients.pid()), run.ended.Sub(run.began))
	stopProfile()
	run.committed = load.Committed.Load() - committedBefore
	stopLoad()
	skipped, loadErr := load.Wait()
	if err := errors.Join(rttErr, loadErr); err != nil {
		return nil, err
	}
	run.skipped, run.acks, run.bare = skipped, load.Acks, bare
	if run.head, err = w.app.Versions().EventSeq(ctx); err != nil {
		return nil, fmt.Errorf("gateway latency: head: %w", err)
	}
	run.drainErr = drainClients(ctx, clients.slots, run.head)
	return run, nil
}

// gatewayProfileEnv, when set to a directory, has the latency case write CPU profiles of its
// run at the target's load there: server.pprof, the benchmark's process in the measured
// window, and clients.pprof, the client process from the window's start until it stops.
const gatewayProfileEnv = "BOTHYBENCH_GATEWAY_PROFILE"

// profileWindow starts both CPU profiles into dir and returns what stops the server's.
func profileWindow(dir string, clients *clientProc) (func(), error) {
	if err := clients.startProfile(filepath.Join(dir, "clients.pprof")); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, "server.pprof")) //nolint:gosec // G304: a directory the user chose.
	if err != nil {
		return nil, fmt.Errorf("gateway profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("gateway profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

// result matches the run's commits with the clients' arrivals (got, from the client process
// once it stopped): which event each seq of the run is, and when its commit returned (on k,
// the clock the client process's arrivals compare with), in the window.
func (run *latencyRun) result(ctx context.Context, conn *pgx.Conn, got clientResults, k clock, idle []time.Duration) (gatewayLatency, error) {
	rows, err := conn.Query(ctx, "SELECT seq, id FROM sync.event_log WHERE seq > $1 AND seq <= $2", run.from, run.head)
	if err != nil {
		return gatewayLatency{}, fmt.Errorf("gateway latency: read the seqs: %w", err)
	}
	commits := map[int64]int64{}
	for rows.Next() {
		var (
			seq int64
			id  uuid.UUID
		)
		if err := rows.Scan(&seq, &id); err != nil {
			rows.Close()
			return gatewayLatency{}, fmt.Errorf("gateway latency: read the seqs: %w", err)
		}
		if at, ok := run.acks[id]; ok && !at.Before(run.began) && at.Before(run.ended) {
			commits[seq] = k.at(at)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return gatewayLatency{}, fmt.Errorf("gateway latency: read the seqs: %w", err)
	}
	var samples []time.Duration
	for i, seqs := range got.Seqs {
		for j, seq := range seqs {
			if at, ok := commits[seq]; ok {
				samples = append(samples, time.Duration(max(got.Ats[i][j]-at, 0)))
			}
		}
	}
	if len(samples) == 0 || len(run.bare) == 0 {
		return gatewayLatency{}, fmt.Errorf("gateway latency at %d events/s: no samples: nothing was delivered in the measured window", run.rate)
	}
	r := gatewayLatency{
		Connections: len(got.Seqs), RequestedRate: run.rate,
		AchievedRate: bench.Round1(float64(run.committed) / run.ended.Sub(run.began).Seconds()), Skipped: run.skipped,
		Events: len(commits), Deliveries: len(samples), Missing: len(commits)*len(got.Seqs) - len(samples),
		BareSamples: len(run.bare), BusyCores: run.cpu.All, ServerCores: run.cpu.Server, ClientCores: run.cpu.Clients,
		SchedP50Ms: run.sched.GoP50Ms, SchedP99Ms: run.sched.GoP99Ms, ServerRunWait: run.sched.ServerWait, ClientRunWait: run.sched.ClientWait,
		P50Ms: bench.Ms(bench.Percentile(samples, 50)), P99Ms: bench.Ms(bench.Percentile(samples, 99)),
		BareP50Ms: bench.Ms(bench.Percentile(run.bare, 50)), BareP99Ms: bench.Ms(bench.Percentile(run.bare, 99)),
		IdleBareP50Ms: bench.Ms(bench.Percentile(idle, 50)), IdleBareP99Ms: bench.Ms(bench.Percentile(idle, 99)),
	}
	if run.drainErr != nil {
		r.DrainError = run.drainErr.Error()
	}
	r.P50Ratio, r.P99Ratio = bench.Round2(r.P50Ms/r.BareP50Ms), bench.Round2(r.P99Ms/r.BareP99Ms)
	return r, nil
}

// drainClients waits until every client has received the event at head or ended, at most
// gwDrainTimeout; it reports the clients that did not.
func drainClients(ctx context.Context, slots []clientSlot, head int64) error {
	deadline := time.Now().Add(gwDrainTimeout)
	for {
		behind, ended := 0, 0
		for i := range slots {
			if slots[i].ended.Load() != 0 {
				ended++
				continue
			}
			if slots[i].lastSeq.Load() < head {
				behind++
			}
		}
		switch {
		case behind == 0 && ended == 0:
			return nil
		case behind == 0:
			return fmt.Errorf("%d connections ended before the last event: %w", ended, slotFailure(slots))
		case time.Now().After(deadline):
			return fmt.Errorf("%d connections had not received seq %d after %v, %d ended", behind, head, gwDrainTimeout, ended)
		}
		if !bench.SleepCtx(ctx, 5*time.Millisecond) {
			return ctx.Err()
		}
	}
}

// gwFanoutRounds is how many rounds the fan-out case runs in: each measures the gateway and
// then the baseline for half the case's time, on connections of their own (a process may
// not hold both sets of 5,000 at once), so drift on the machine hits both alike.
const gwFanoutRounds = 2

// gatewayFanoutCase measures delivered event frames per second with o.gwFanoutConns
// connections, in gwFanoutRounds rounds: the gateway's (Sam's and Robin's in turn, after
// hello and ready) while one writer appends gwEventsPerTx events per transaction through the
// App, keeping at most gwWindow transactions on their way to the slowest connection; then the
// bare broadcast server's, writing the first event frame a gateway client received, to as
// many connections read by the same client code, within the same window.
func gatewayFanoutCase(ctx context.Context, w *gatewayWorld, o bench.Options) (r gatewayFanout, err error) {
	r = gatewayFanout{Connections: o.GwFanoutConns, EventsPerTx: gwEventsPerTx, Window: gwWindow, Rounds: gwFanoutRounds}
	d := o.Duration / gwFanoutRounds
	var (
		frame         []byte
		gw, bareCount frameCount
	)
	for range gwFanoutRounds {
		c, first, tx, err := w.fanout(ctx, o, d)
		if err != nil {
			return r, err
		}
		if frame == nil {
			frame = first
		}
		r.Transactions += tx
		gw.add(c)
		c, err = bareFanout(ctx, frame, o, d)
		if err != nil {
			return r, err
		}
		bareCount.add(c)
	}
	r.FrameBytes = len(frame)
	r.Frames, r.FramesPerSecond = gw.frames, gw.rate()
	r.BusyCores, r.ServerCores, r.ClientCores = gw.meanCPU()
	r.BareFrames, r.BareFramesPerSecond = bareCount.frames, bareCount.rate()
	r.BareBusyCores, r.BareServerCores, r.BareClientCores = bareCount.meanCPU()
	r.Ratio = bench.Round2(r.FramesPerSecond / r.BareFramesPerSecond)
	return r, nil
}

// fanout is the gateway's half of a round of gatewayFanoutCase, measured for d; it returns
// the first event frame and the writer's transactions.
func (w *gatewayWorld) fanout(ctx context.Context, o bench.Options, d time.Duration) (frameCount, []byte, int64, error) {
	clients, err := startClientProc(ctx, clientSpec{URL: w.ws, Tokens: w.tokens, N: o.GwFanoutConns, KeepFirst: true})
	if err != nil {
		return frameCount{}, nil, 0, fmt.Errorf("gateway fan-out: %w", err)
	}
	defer func() { _, _ = clients.stop() }()
	var (
		stop     atomic.Bool
		appended atomic.Int64
		done     = make(chan error, 1)
	)
	go func() { done <- w.write(ctx, clients.slots, &stop, &appended) }()
	count, measureErr := measureFrames(ctx, clients, o.Warmup, d)
	stop.Store(true)
	writeErr := <-done
	got, stopErr := clients.stop()
	if err := errors.Join(measureErr, writeErr, stopErr, w.waitConnections(ctx, 0)); err != nil {
		return frameCount{}, nil, 0, fmt.Errorf("gateway fan-out: %w", err)
	}
	if got.First == nil {
		return frameCount{}, nil, 0, errors.New("gateway fan-out: no event frame arrived")
	}
	return count, got.First, appended.Load() / gwEventsPerTx, nil
}

// write appends gwEventsPerTx events per transaction until stop, each as soon as the slowest
// client is at most gwWindow transactions behind the events appended so far.
func (w *gatewayWorld) write(ctx context.Context, slots []clientSlot, stop *atomic.Bool, appended *atomic.Int64) error {
	return pace(ctx, slots, stop, func(slowest int64) error {
		for appended.Load() <= slowest+gwWindow*gwEventsPerTx && !stop.Load() {
			if err := bench.AppendReal(ctx, w.app, w.events(gwEventsPerTx)); err != nil {
				return err
			}
			appended.Add(gwEventsPerTx)
		}
		return nil
	})
}

// frameCount is what measureFrames counted (or the sum of several).
type frameCount struct {
	frames  int64
	elapsed time.Duration
	cpu     cpuUse // the busy cores meanwhile (summed by add)
	counts  int    // how many counts add summed
}

// add sums c into f.
func (f *frameCount) add(c frameCount) {
	f.frames += c.frames
	f.elapsed += c.elapsed
	f.cpu.All += c.cpu.All
	f.cpu.Server += c.cpu.Server
	f.cpu.Clients += c.cpu.Clients
	f.counts++
}

// meanCPU returns the mean busy cores of the counts add summed: the machine's, the
// benchmark's process's and the client process's.
func (f frameCount) meanCPU() (all, server, clients float64) {
	n := float64(max(f.counts, 1))
	return bench.Round2(f.cpu.All / n), bench.Round2(f.cpu.Server / n), bench.Round2(f.cpu.Clients / n)
}

// rate is the frames per second.
func (f frameCount) rate() float64 {
	return bench.Round1(float64(f.frames) / f.elapsed.Seconds())
}

// measureFrames waits warmup, then counts the event frames the clients receive in d.
func measureFrames(ctx context.Context, clients *clientProc, warmup, d time.Duration) (frameCount, error) {
	if !bench.SleepCtx(ctx, warmup) {
		return frameCount{}, ctx.Err()
	}
	before, cpu, began := totalFrames(clients.slots), sampleCPU(clients.pid()), time.Now()
	if !bench.SleepCtx(ctx, d) {
		return frameCount{}, ctx.Err()
	}
	return frameCount{frames: totalFrames(clients.slots) - before, elapsed: time.Since(began), cpu: cpu.use(sampleCPU(clients.pid()))}, nil
}

// bareFanout is the baseline's half of a round of gatewayFanoutCase, measured for d.
func bareFanout(ctx context.Context, frame []byte, o bench.Options, d time.Duration) (count frameCount, err error) {
	b, err := startBareServer(ctx, frame)
	if err != nil {
		return count, err
	}
	defer func() {
		if cerr := b.close(); cerr != nil && err == nil {
			err = fmt.Errorf("bare server: %w", cerr)
		}
	}()
	clients, err := startClientProc(ctx, clientSpec{URL: b.url(), N: o.GwFanoutConns})
	if err != nil {
		return count, fmt.Errorf("bare fan-out: %w", err)
	}
	// The clients stop first (before the deferred close), so that their ends do not count as
	// failures and no handler of the server blocks on a write.
	defer func() { _, _ = clients.stop() }()
	var stop atomic.Bool
	paced := make(chan error, 1)
	go func() {
		// The same window as the gateway's writer: gwWindow transactions of gwEventsPerTx
		// frames beyond the slowest client.
		paced <- pace(ctx, clients.slots, &stop, func(slowest int64) error {
			b.raise((slowest/gwEventsPerTx + gwWindow + 1) * gwEventsPerTx)
			return nil
		})
	}()
	count, err = measureFrames(ctx, clients, o.Warmup, d)
	stop.Store(true)
	paceErr := <-paced
	_, stopErr := clients.stop()
	if err := errors.Join(err, paceErr, stopErr); err != nil {
		return count, fmt.Errorf("bare fan-out: %w", err)
	}
	return count, nil
}
