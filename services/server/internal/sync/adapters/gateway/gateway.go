// Package gateway is the WebSocket transport of the sync module (spec 03, "Gateway"): GET
// /api/v1/gateway upgrades to a WebSocket speaking JSON frames, and each connection gets a
// snapshot (ready) or catches up from its cursor (resume), then receives live events from the
// process's log tail, each authorized for it at delivery time.
//
// It uses the same ports as REST: sync.Snapshot for ready, sync.CatchUp (Check, then Page
// until the head) for resume and for every catch-up a connection needs later, and the sync
// app's Delivery (the per-row rule and the envelope encoder that CatchUp.Page uses as well)
// for live events. So a stored event reaches a client alike over both transports, and the
// cursor means the same on both.
//
// The gateway holds one subscription to the tail (the hub), which queues each batch on
// every live connection. An idle connection costs one goroutine (its reader) and small
// buffers; its writer runs only while it has something to write, and writes the frames of
// a batch in one write to the socket. Nothing is spent per event but the frames written:
// the events of a tail batch are named (one directory query) and encoded once per receiver
// kind for the whole process, and every connection writes those shared bytes.
//
// A Gateway is an http.Handler; wire mounts it at GET /api/v1/gateway beside the strict
// server, runs the log tail, and calls Shutdown before the HTTP server drains. Many
// Gateways, or many connections to one, can run in one process (benchmarks do), each over
// its own or a shared Tail.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	gosync "sync"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/httpmw"
	syncmod "bothy.example.com/server/internal/sync"
	syncapp "bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/sync/domain"
)

// Path is the route of the gateway. It is no OpenAPI operation (spec 05 lists it apart):
// wire mounts it on the router beside the strict server.
const Path = "/api/v1/gateway"

// Authenticator turns the bearer token of an upgrade or of an auth frame into the actor
// (identity.Authenticator).
type Authenticator interface {
	// Authenticate returns the actor of the token; an error wrapping
	// problem.ErrUnauthenticated for a token that is refused, any other for a failure.
	Authenticate(ctx context.Context, token string) (actor.Actor, error)
}

// CredentialEnd is why a token no longer authenticates, as Credentials tells it.
type CredentialEnd int

// The ends of a credential Credentials reports; each closes its sessions with the reason of
// the same name (token_revoked, token_expired, principal_deactivated).
const (
	// CredentialRevoked: the token was revoked (or is gone), or its device was revoked.
	CredentialRevoked CredentialEnd = iota + 1
	// CredentialExpired: the token expired.
	CredentialExpired
	// CredentialDeactivated: the token's principal was deactivated.
	CredentialDeactivated
)

// Credentials re-validates the tokens of the open sessions in one query (identity's batched
// check, which wire binds), every gateway.credential_recheck_interval: the backstop for a
// credential that ended without an event the tail handed the hub.
type Credentials interface {
	// Ended returns, of tokenIDs (distinct), the tokens that no longer authenticate, with
	// why; a token absent from the map still authenticates.
	Ended(ctx context.Context, tokenIDs []uuid.UUID) (map[uuid.UUID]CredentialEnd, error)
}

// FailedAuth counts an auth frame's refused token against the client's address, in the
// per-address limit of failed authentications (http.rate_limit.failed_auth_*) a REST 401
// counts in: wire binds it to that limiter. The session runs after the upgrade's handler
// returned, so the address is read from the upgrade request and kept.
type FailedAuth interface {
	// Address returns the client address of the upgrade request, as the limiter keys it.
	Address(r *http.Request) string
	// Failed counts one failed authentication from addr.
	Failed(addr string)
}

// Delivery decides and names live events for one receiver (syncapp.Delivery, which
// CatchUp.Page uses too).
type Delivery interface {
	// For returns the filter of the actor in ctx, with its current Scope.
	For(ctx context.Context) (*syncapp.Filter, error)
	// Names resolves the actors of events in one directory query, for syncapp.Encode.
	Names(ctx context.Context, events []domain.StoredEvent) (map[uuid.UUID]domain.PrincipalRef, error)
	// Only returns the delivery-only members of the events (invocation tokens), for
	// syncapp.Encode.
	Only(ctx context.Context, events []domain.StoredEvent) (map[uuid.UUID]domain.DeliveryOnly, error)
}

// Tail is the process's log tail as the gateway uses it (syncapp.Tail): sync.Tail, and when
// it has read the head it starts from. A connection starts only once it has, so that no
// event falls between the connection's head and the tail's first batch for it.
type Tail interface {
	syncmod.Tail
	// Ready is closed once the tail knows where it starts; events committed after that reach
	// every subscriber.
	Ready() <-chan struct{}
}

// Heartbeats records an agent's heartbeat frame (spec 03, "Presence"), as sendAgentHeartbeat
// records one over REST: wire binds the agents module's presence. The gateway owns the port
// so that the sync module knows nothing of agents.
type Heartbeats interface {
	// Heartbeat records a heartbeat of the agent in ctx, with its reported billing mode when
	// hasMode. Errors: a problem.Validation for a billing mode the agents module refuses,
	// the authorizer's refusals, the database's.
	Heartbeat(ctx context.Context, billingMode string, hasMode bool) error
}

// SnapshotEncoder writes a snapshot as the JSON body of getSnapshot, so the ready frame
// carries exactly what GET /api/v1/sync/snapshot answers (wire binds the HTTP adapter's
// mapping).
type SnapshotEncoder interface {
	// EncodeSnapshot returns the JSON object of v.
	EncodeSnapshot(v syncmod.SnapshotView) ([]byte, error)
}

// SnapshotEncoderFunc adapts a function to SnapshotEncoder.
type SnapshotEncoderFunc func(v syncmod.SnapshotView) ([]byte, error)

// EncodeSnapshot calls f.
func (f SnapshotEncoderFunc) EncodeSnapshot(v syncmod.SnapshotView) ([]byte, error) {
	return f(v)
}

// FrameWrites is the per-token write limit the client frames that write (ack, heartbeat) take
// from, as their REST operations do (http.rate_limit.token_writes_*): wire binds it to that
// limiter. Key names the connection's principal and device, as the REST limit keys a token.
type FrameWrites interface {
	// Allow takes a token of key's bucket; false with how long until it has one again when
	// it is empty.
	Allow(key string) (ok bool, wait time.Duration)
}

// Deps are what a Gateway needs; all but FailedAuth, Consumers, Heartbeats, FrameWrites, Logger and Clock
// are required.
type Deps struct {
	// Authenticator checks the token of the upgrade's Authorization header or of the auth
	// frame: identity.Authenticator.
	Authenticator Authenticator
	// Credentials re-validates the open sessions' tokens in one query per round:
	// identity's batched credential check.
	Credentials Credentials
	// FailedAuth counts refused auth frames against the client's address; nil when the
	// limit of failed authentications is off.
	FailedAuth FailedAuth
	// Authorizer decides events.catch_up on the instance for the actor before any data
	// flows: authz.Authorizer.
	Authorizer authorize.Authorizer
	// CatchUp serves resume and every later catch-up of a connection: syncapp.CatchUp.
	CatchUp syncmod.CatchUp
	// Snapshot builds the snapshot of hello: syncapp.Snapshot.
	Snapshot syncmod.Snapshot
	// SnapshotEncoder writes the snapshot as getSnapshot does.
	SnapshotEncoder SnapshotEncoder
	// Tail gives each connection its subscription to the process's live events; it must be
	// running (wire runs it in the gateway role), and a connection waits for it to be ready
	// (within gateway.auth_timeout) before it starts: syncapp.Tail.
	Tail Tail
	// Delivery decides and names live events: syncapp.Delivery.
	Delivery Delivery
	// Consumers serves resume with a durable consumer and the ack frame:
	// syncapp.Consumers; nil refuses both (a bad frame).
	Consumers syncmod.Consumers
	// Heartbeats records agents' heartbeat frames: the agents module's presence; nil
	// refuses the frame (a bad frame).
	Heartbeats Heartbeats
	// FrameWrites limits the ack and heartbeat frames per token; nil when the per-token write
	// limit is off.
	FrameWrites FrameWrites
	// Config holds the gateway.* keys (ConfigFrom).
	Config Config
	// Logger receives connection failures; nil discards them. Tokens are never logged.
	Logger *slog.Logger
	// Clock is the time a token's expiry is checked against (identity's clock, so a test
	// that moves it past a token's expiry sees the connection close); nil means the system
	// clock.
	Clock clock.Clock
}

// Gateway serves the WebSocket gateway. Build it with New, mount it (it is an
// http.Handler), stop it with Shutdown.
type Gateway struct {
	deps    Deps
	cfg     Config
	log     *slog.Logger
	batches *batchCache
	hub     *hub
	clock   clock.Clock

	// shared is the context of the work sessions share (a batch's directory lookup, the
	// credential recheck); stop ends it when Shutdown gives up.
	shared context.Context
	stop   context.CancelFunc

	mu       gosync.Mutex
	closing  chan struct{} // closed by Shutdown: every session closes with 1001
	sessions map[*session]struct{}
	wg       gosync.WaitGroup
	// stopSweep stops the expiry sweeper and the credential recheck, which run while there
	// are sessions; nil when they do not run.
	stopSweep chan struct{}
}

// New returns a Gateway over deps; it fails for a missing dependency or an invalid
// configuration (Config.Validate), so a wiring mistake stops the process at start.
func New(deps Deps) (*Gateway, error) {
	var errs []error
	for _, d := range []struct {
		name    string
		missing bool
	}{
		{"authenticator", deps.Authenticator == nil}, {"credentials", deps.Credentials == nil},
		{"authorizer", deps.Authorizer == nil},
		{"catch-up", deps.CatchUp == nil}, {"snapshot", deps.Snapshot == nil},
		{"snapshot encoder", deps.SnapshotEncoder == nil}, {"tail", deps.Tail == nil},
		{"delivery", deps.Delivery == nil},
	} {
		if d.missing {
			errs = append(errs, fmt.Errorf("%s is nil", d.name))
		}
	}
	errs = append(errs, deps.Config.Validate())
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("gateway: new: %w", err)
	}
	cfg := deps.Config
	cfg.AllowedOrigins = make([]string, len(deps.Config.AllowedOrigins))
	for i, o := range deps.Config.AllowedOrigins {
		cfg.AllowedOrigins[i], _ = httpmw.ParseOrigin(o) // Validate accepted every one
	}
	logger := deps.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	clk := deps.Clock
	if clk == nil {
		clk = clock.System()
	}
	g := &Gateway{
		clock:    clk,
		deps:     deps,
		cfg:      cfg,
		log:      logger,
		closing:  make(chan struct{}),
		sessions: map[*session]struct{}{},
	}
	g.shared, g.stop = context.WithCancel(context.Background())
	g.batches = newBatchCache(g.shared, deps.Delivery)
	g.hub = newHub(deps.Tail, cfg.SendBuffer, cfg.BatchWindow)
	g.hub.arrived = g.endCredentials
	return g, nil
}

// Connections returns the number of open connections (upgraded and not yet ended).
func (g *Gateway) Connections() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.sessions)
}

// add registers a session; false once Shutdown has begun (the upgrade is refused then).
func (g *Gateway) add(s *session) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.closing:
		return false
	default:
	}
	g.sessions[s] = struct{}{}
	g.wg.Add(1)
	if g.stopSweep == nil {
		g.stopSweep = make(chan struct{})
		g.wg.Add(1)
		go func(stop <-chan struct{}) {
			defer g.wg.Done()
			g.sweep(stop)
		}(g.stopSweep)
		g.wg.Add(1)
		go func(stop <-chan struct{}) {
			defer g.wg.Done()
			g.recheck(stop)
		}(g.stopSweep)
	}
	return true
}

// remove unregisters a session that has ended.
func (g *Gateway) remove(s *session) {
	g.mu.Lock()
	delete(g.sessions, s)
	if len(g.sessions) == 0 && g.stopSweep != nil {
		close(g.stopSweep)
		g.stopSweep = nil
	}
	g.mu.Unlock()
	g.wg.Done()
}

// Shutdown closes every connection with 1001 (going away) after the frames it is writing,
// refuses new upgrades with 503, and waits until every connection has ended or ctx ends;
// then it drops the remaining connections without a close handshake and returns ctx.Err().
// wire calls it on SIGTERM before the HTTP server drains, since http.Server.Shutdown does
// not track upgraded connections. It may be called more than once.
func (g *Gateway) Shutdown(ctx context.Context) error {
	g.mu.Lock()
	select {
	case <-g.closing:
	default:
		close(g.closing)
	}
	// A live connection's writer runs only when it has work: wake each to close.
	for s := range g.sessions {
		s.goAway()
	}
	g.mu.Unlock()
	done := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	for s := range g.sessions {
		s.drop()
	}
	g.mu.Unlock()
	g.stop()
	<-done
	return fmt.Errorf("gateway: shutdown: %w", ctx.Err())
}

// ServeHTTP upgrades GET /api/v1/gateway (see the package documentation and spec 03). Before
// the upgrade it refuses, as problem responses: a cross-site Origin (403), a refused
// Authorization header (401) or an actor that may not receive events (403 forbidden or
// device_pending), and any request once Shutdown began (503). A request without an
// Authorization header is upgraded and must send an auth frame first.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.serve(w, r)
}
