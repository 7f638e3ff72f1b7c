package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	gosync "sync"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/correlation"
	"bothy.example.com/server/internal/kernel/httpmw"
	"bothy.example.com/server/internal/kernel/logging"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
	syncapp "bothy.example.com/server/internal/sync/app"
)

// serve refuses what must be refused before the upgrade, upgrades and runs the session.
func (g *Gateway) serve(w http.ResponseWriter, r *http.Request) {
	if !originAllowed(r, g.cfg.AllowedOrigins) {
		problem.Write(w, r, problem.New(problem.ErrForbidden,
			"The page's origin may not open the gateway: cross-site WebSocket upgrades are refused."))
		return
	}
	if err := upgradeRefusal(w.Header(), r); err != nil {
		problem.Write(w, r, err)
		return
	}
	base := sessionContext(r.Context())
	var who actor.Actor
	authed := len(r.Header.Values("Authorization")) > 0
	if authed {
		a, err := g.authenticateHeader(base, r.Header)
		if err != nil {
			if errors.Is(err, problem.ErrUnauthenticated) {
				w.Header().Set("WWW-Authenticate", "Bearer")
			}
			problem.Write(w, r, err)
			return
		}
		who = a
	}
	select {
	case <-g.closing:
		problem.Write(w, r, problem.New(problem.ErrUnavailable, "The server is shutting down. Reconnect."))
		return
	default:
	}
	// The origin was checked above, with the gateway's own rule. The upgrader gives the
	// library the connection with small buffers over the session's corkWriter.
	up := &upgrader{ResponseWriter: w, timeout: g.cfg.WriteTimeout}
	conn, err := websocket.Accept(up, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept answered the request.
	}
	token, _ := bearerToken(r.Header)
	s := newSession(base, g, conn, up.cork, who, authed, token)
	if g.deps.FailedAuth != nil {
		s.addr = g.deps.FailedAuth.Address(r)
	}
	if !g.add(s) {
		_ = conn.Close(CloseGoingAway, "server shutting down")
		return
	}
	// The handler returns now (its access log line says 101); the session runs on goroutines
	// of its own until it ends and unregisters itself.
	s.start()
}

// sessionContext is the context a session starts from. The session outlives the request
// (the connection is hijacked and the handler returns), so it keeps, of the request's
// context, what its logs and error frames use: the logger and the request id of the
// upgrade. Nothing else: the request's contexts and whatever the server and the middleware
// put in them would otherwise stay referenced by every connection for its whole life.
func sessionContext(req context.Context) context.Context {
	ctx := logging.With(context.Background(), logging.From(req))
	if id := correlation.From(req); id != "" {
		ctx = correlation.With(ctx, id)
	}
	return ctx
}

// authenticateHeader authenticates the Authorization header of the upgrade and admits its
// actor: problem.ErrUnauthenticated for a header that is no bearer token or a refused token,
// the problem of admit, or a failure.
func (g *Gateway) authenticateHeader(ctx context.Context, h http.Header) (actor.Actor, error) {
	token, ok := bearerToken(h)
	if !ok {
		return actor.Actor{}, problem.ErrUnauthenticated
	}
	a, err := g.deps.Authenticator.Authenticate(ctx, token)
	if err != nil {
		return actor.Actor{}, err
	}
	if err := g.admit(actor.With(ctx, a)); err != nil {
		return actor.Actor{}, err
	}
	return a, nil
}

// admit decides whether the actor of ctx may receive events at all: events.catch_up on the
// instance, which the gateway serves (catch-up and live events). A pending device gets
// problem.ErrDevicePending, an app without events:subscribe problem.ErrForbidden.
func (g *Gateway) admit(ctx context.Context) error {
	return g.deps.Authorizer.Authorize(ctx, kernel.ActionEventsCatchUp, authorize.Instance())
}

// bearerToken returns the token of the request's one Authorization header: the scheme
// Bearer, spaces, a token without spaces (as the REST API reads it).
func bearerToken(h http.Header) (string, bool) {
	values := h.Values("Authorization")
	if len(values) != 1 {
		return "", false
	}
	scheme, rest, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token := strings.TrimLeft(rest, " ")
	if token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}

// headerHasToken reports whether a comma-separated header holds token (case-insensitive).
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// inbound is what the reader hands the session: a decoded frame, or why reading stopped.
type inbound struct {
	frame ClientFrame
	err   error
}

// Why the reader stopped, besides a decoding error (a problem.Validation).
var (
	// errConnEnded: the peer closed or the connection failed; nothing more can be sent.
	errConnEnded = errors.New("connection ended")
	// errFrameTooLarge: a frame above gateway.max_frame_bytes.
	errFrameTooLarge = problem.New(problem.ErrPayloadTooLarge, "A frame is larger than the gateway accepts.")
	// errTailNotReady: the log tail has not read where it starts (the database is not
	// reachable yet).
	errTailNotReady = problem.New(problem.ErrUnavailable, "Live events are not available yet. Reconnect later.")
	// errBinaryFrame: the gateway speaks JSON text frames only.
	errBinaryFrame = problem.Validation(problem.FieldError{Field: "frame", Message: "must be a text message"})
)

// ending is how a session ends: a close code and reason, after an optional frame (error
// or resync_required); or, with drop, no frame and no handshake (the connection is gone or
// cannot take a frame in time).
type ending struct {
	code   websocket.StatusCode
	reason string
	frame  []byte
	drop   bool
}

// dropped ends a session whose connection is unusable.
var dropped = &ending{drop: true}

// session is one connection. Its reader goroutine stays for the connection's life; its
// writer runs only while it has work: first the start (authentication, hello or resume),
// then, started on demand and ending when it has written everything, whenever the hub
// queues a batch, the reader hands a frame, a heartbeat is due, a ping was answered or the
// gateway shuts down. One writer at a time: whoever queues work starts it unless it runs. A
// short-lived goroutine per heartbeat waits for the pong.
type session struct {
	g      *Gateway
	conn   *websocket.Conn
	cork   *corkWriter
	ctx    context.Context // the actor's, once known; cancelled when the session ends
	cancel context.CancelFunc
	who    actor.Actor
	authed bool

	done    chan struct{} // closed when the session ended: the helpers stop handing things over
	taken   chan struct{} // the writer took the reader's frame
	wake    chan struct{} // work was queued while the start runs
	helpers gosync.WaitGroup
	heart   *time.Timer // queues a heartbeat every gateway.heartbeat_interval once live

	mu      gosync.Mutex // guards the work below
	running bool         // a writer runs (or the session ended: none starts again)
	ended   bool
	batches []syncmod.Batch // queued by the hub, at most gateway.send_buffer
	subErr  error           // the hub dropped the connection: errLagged, errHubLagged, ErrTailStopped
	in      inbound         // the reader's frame, when hasIn
	hasIn   bool
	beatDue bool
	ponged  bool
	going   bool // Shutdown began
	// The credential: known once authenticated (authedCred), ended (credEnded names why)
	// when its token is revoked or expires or its principal is deactivated.
	cred       credential
	authedCred bool
	credEnded  string

	// The writer's state, touched by the writer alone.
	// expiresAt is the expiry of the session's token (zero: never), checked before each
	// frame, so that no frame but the final error follows it (expired).
	expiresAt time.Time
	filter    *syncapp.Filter
	epoch     uuid.UUID
	// consumer is the durable consumer the session resumed with; empty without one (then
	// ack is a bad frame).
	consumer string
	cursor   int64 // everything up to it was checked and its frames written
	told     int64 // the highest cursor the client can know from the frames it got
	lastLag  time.Time
	pinging  bool
	missed   int
	closed   bool // end ran
	// token is the bearer token until the session is live: authenticated once more after it
	// registered with the hub, so that a revocation committed between the upgrade and the
	// registration (which the hub could not see) ends it too. Then forgotten.
	token string
	// addr is the client address of the upgrade, which a refused auth frame counts against
	// (Deps.FailedAuth); empty without it.
	addr string
}

func newSession(base context.Context, g *Gateway, conn *websocket.Conn, cork *corkWriter, who actor.Actor, authed bool, token string) *session {
	ctx, cancel := context.WithCancel(base)
	if authed {
		ctx = actor.With(ctx, who)
	}
	return &session{
		g: g, conn: conn, cork: cork, ctx: ctx, cancel: cancel, who: who, authed: authed, token: token,
		cred: credentialOf(who), authedCred: authed, expiresAt: who.ExpiresAt,
		done: make(chan struct{}), taken: make(chan struct{}, 1), wake: make(chan struct{}, 1),
		// The start is the first writer: work queued before it runs (Shutdown's, once the
		// session is registered) waits for it instead of starting another.
		running: true,
	}
}

// credentialOf is the credential of an authenticated actor.
func credentialOf(a actor.Actor) credential {
	return credential{tokenID: a.TokenID, principalID: a.PrincipalID, expiresAt: a.ExpiresAt}
}

// start runs the session: the reader on a goroutine of its own, the start on the writer.
// Both are fresh goroutines, so neither keeps the stack of the HTTP handler (deep from the
// middleware), which returns once they run.
func (s *session) start() {
	// The library's own limit lies above ours, so an oversized frame gets the gateway's
	// close code (4007) rather than the library's 1009.
	s.conn.SetReadLimit(s.g.cfg.MaxFrameBytes + 1)
	logCtx := s.ctx // the writer replaces s.ctx when an auth frame names the actor
	s.helpers.Go(func() { s.read(logCtx) })
	go s.begin()
}

// begin is the writer's first run: the start, then whatever was queued meanwhile.
func (s *session) begin() {
	defer s.recoverPanic()
	if end := s.open(); end != nil {
		s.end(end)
		return
	}
	s.heart = time.AfterFunc(s.g.cfg.HeartbeatInterval, s.queueBeat)
	s.work()
}

// recoverPanic turns a panic of the writer into a close with 1011 and a log line, as the
// router's Recover middleware does for a handler (the writer runs on no handler's
// goroutine).
func (s *session) recoverPanic() {
	v := recover()
	if v == nil {
		return
	}
	s.g.log.ErrorContext(s.ctx, "panic in gateway connection", "panic", fmt.Sprint(v), "stack", string(debug.Stack()),
		"principal_id", s.who.PrincipalID.String())
	s.end(&ending{code: CloseInternal, reason: "internal error", frame: errorFrame(problem.From(s.ctx, errPanicked))})
}

// errPanicked is the problem of a connection whose writer panicked.
var errPanicked = errors.New("gateway: connection panicked")

// queue records work under the session's mutex and starts the writer unless it runs (or,
// during the start, wakes it); false once the session ended.
func (s *session) queue(f func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false
	}
	f()
	if s.running {
		select {
		case s.wake <- struct{}{}:
		default:
		}
		return true
	}
	s.running = true
	go s.work()
	return true
}

// offer queues a batch of the hub; false when the session ended or has buffer batches
// waiting (it lagged: it leaves the hub and catches up from its cursor).
func (s *session) offer(b syncmod.Batch, buffer int) bool {
	ok, lagged := false, false
	s.queue(func() {
		if len(s.batches) >= buffer {
			s.subErr, lagged = errLagged, true
			return
		}
		s.batches = append(s.batches, b)
		ok = true
	})
	if lagged {
		s.g.log.WarnContext(s.ctx, laggedMessage, "buffer", buffer, "principal_id", s.who.PrincipalID.String())
	}
	return ok
}

// laggedMessage is logged when a connection leaves live delivery for catch-up.
const laggedMessage = "gateway connection lagged: it catches up from its cursor"

// lose records that the hub dropped the session (the tail dropped the hub or stopped).
func (s *session) lose(err error) {
	s.queue(func() { s.subErr = err })
}

// queueBeat queues a heartbeat (the heart timer's function).
func (s *session) queueBeat() {
	s.queue(func() { s.beatDue = true })
}

// goAway queues the close of Shutdown.
func (s *session) goAway() {
	s.queue(func() { s.going = true })
}

// work is the writer once the session is live: it writes what is queued, corked so that
// the frames of a batch go out in one write, until nothing is left, and ends.
func (s *session) work() {
	defer s.recoverPanic()
	for {
		s.mu.Lock()
		batches, subErr, in, hasIn, beatDue, ponged, going := s.batches, s.subErr, s.in, s.hasIn, s.beatDue, s.ponged, s.going
		if credEnded := s.credEnded; credEnded != "" {
			s.mu.Unlock()
			s.end(credentialEnding(credEnded))
			return
		}
		s.batches, s.subErr, s.in, s.hasIn, s.beatDue, s.ponged = nil, nil, inbound{}, false, false, false
		if batches == nil && subErr == nil && !hasIn && !beatDue && !ponged && !going {
			s.running = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		if hasIn {
			s.taken <- struct{}{}
		}
		if end := s.handle(batches, subErr, in, hasIn, beatDue, ponged, going); end != nil {
			s.end(end)
			return
		}
	}
}

// handle writes one round of queued work: the batches in order, then the end of the hub's
// registration, the client's frame, the pong, the heartbeat; shutdown first and after each
// batch, so that it comes after the batch in flight.
func (s *session) handle(batches []syncmod.Batch, subErr error, in inbound, hasIn, beatDue, ponged, going bool) *ending {
	s.cork.cork()
	end := s.handleCorked(batches, subErr, in, hasIn, beatDue, ponged, going)
	if err := s.cork.uncork(); err != nil && end == nil {
		return dropped
	}
	return end
}

func (s *session) handleCorked(batches []syncmod.Batch, subErr error, in inbound, hasIn, beatDue, ponged, going bool) *ending {
	if going || s.closing() {
		return goingAway
	}
	for _, b := range batches {
		if end := s.deliver(b); end != nil {
			return end
		}
		// No flush per batch: every batch queued since the last round goes out in the one
		// write of handle's uncork, so a connection that fell behind catches up in fewer
		// writes (corkWriter writes through above its limit).
		if s.closing() {
			return goingAway
		}
	}
	if subErr != nil {
		if end := s.resubscribe(subErr); end != nil {
			return end
		}
	}
	if hasIn {
		if end := s.inbound(in); end != nil {
			return end
		}
	}
	if ponged {
		s.pinging, s.missed = false, 0
	}
	if beatDue {
		if end := s.beat(); end != nil {
			return end
		}
		s.heart.Reset(s.g.cfg.HeartbeatInterval)
	}
	return nil
}

// closing reports whether Shutdown began.
func (s *session) closing() bool {
	select {
	case <-s.g.closing:
		return true
	default:
		return false
	}
}

// end closes the connection as e says, stops what the session started and unregisters it.
func (s *session) end(e *ending) {
	if s.closed {
		// A panic while ending: the connection is closed, the rest may not have run.
		_ = s.conn.CloseNow()
		return
	}
	s.closed = true
	s.mu.Lock()
	s.ended, s.running = true, true
	s.batches = nil
	s.mu.Unlock()
	s.g.hub.remove(s)
	if s.heart != nil {
		s.heart.Stop()
	}
	// Whatever a panic left gathered goes out first; the close frame must not wait in it.
	if s.cork.uncork() != nil {
		e = dropped
	}
	s.finish(e)
	close(s.done)
	s.cancel()
	s.helpers.Wait()
	s.g.remove(s)
}

// drop closes the connection at once and cancels what the session waits for (Shutdown gave
// up waiting); safe from any goroutine.
func (s *session) drop() {
	s.cancel()
	_ = s.conn.CloseNow()
}

// finish sends the ending's frame and closes the connection.
func (s *session) finish(e *ending) {
	if e.drop {
		_ = s.conn.CloseNow()
		return
	}
	if e.frame != nil && s.write(e.frame) != nil {
		_ = s.conn.CloseNow()
		return
	}
	_ = s.conn.Close(e.code, e.reason)
}

// read decodes client frames until reading fails or a frame is bad, and hands each over.
// Its reads have no context: the end of the session closes the connection, which ends them
// (logCtx is for its log line only).
func (s *session) read(logCtx context.Context) {
	defer func() {
		if v := recover(); v != nil {
			s.g.log.ErrorContext(logCtx, "panic in gateway reader", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			s.hand(inbound{err: errPanicked})
		}
	}()
	limit := s.g.cfg.MaxFrameBytes
	for {
		typ, r, err := s.conn.Reader(context.Background())
		if err != nil {
			s.hand(inbound{err: errConnEnded})
			return
		}
		if typ != websocket.MessageText {
			s.hand(inbound{err: errBinaryFrame})
			return
		}
		data, err := io.ReadAll(io.LimitReader(r, limit+1))
		switch {
		case err != nil:
			s.hand(inbound{err: errConnEnded})
			return
		case int64(len(data)) > limit:
			s.hand(inbound{err: errFrameTooLarge})
			return
		}
		f, err := DecodeClientFrame(data)
		if !s.hand(inbound{frame: f, err: err}) || err != nil {
			return
		}
	}
}

// hand passes m to the writer and waits until it took it (so a client cannot queue frames
// faster than they are answered); false once the session has ended.
func (s *session) hand(m inbound) bool {
	if !s.queue(func() { s.in, s.hasIn = m, true }) {
		return false
	}
	select {
	case <-s.taken:
		return true
	case <-s.done:
		return false
	}
}

// takeInbound takes the reader's frame during the start.
func (s *session) takeInbound() (inbound, bool) {
	s.mu.Lock()
	m, ok := s.in, s.hasIn
	s.in, s.hasIn = inbound{}, false
	s.mu.Unlock()
	if ok {
		s.taken <- struct{}{}
	}
	return m, ok
}

// write writes one frame. The corkWriter bounds each write to the socket by
// gateway.write_timeout (a deadline on the connection), so a peer that stopped reading
// fails the write and is dropped instead of holding its session; while the writer is
// corked, the frame is gathered and reaches the socket with the round's other frames.
func (s *session) write(frame []byte) error {
	return s.conn.Write(context.Background(), websocket.MessageText, frame)
}

// send is write for the loop: nil, or the ending of a connection that failed or whose
// token expired.
func (s *session) send(frame []byte) *ending {
	if end := s.expired(); end != nil {
		return end
	}
	if err := s.write(frame); err != nil {
		return dropped
	}
	return nil
}

// expired orders a token's expiry with delivery, as the hub orders a revocation (spec 03, "A
// session ends with its credential"): once the gateway's clock reached the expiry, the
// session ends with token_expired instead of writing another frame. An event is delivered
// after its commit, so none committed at or after the expiry reaches the connection, however
// long before its next round the sweeper would have closed it. Nil while the token is valid.
func (s *session) expired() *ending {
	if s.expiresAt.IsZero() || s.g.clock.Now().Before(s.expiresAt) {
		return nil
	}
	return credentialEnding(reasonTokenExpired)
}

// fatal ends the session with the error frame of err and code. The frame of an unavailable
// error says in retry_after_ms when to come back: http.unavailable_retry_after plus a jitter
// of up to as much again, as the Retry-After of a 503.
func (s *session) fatal(code websocket.StatusCode, err error) *ending {
	p := problem.From(s.ctx, err)
	var retryMS int64
	if errors.Is(err, problem.ErrUnavailable) {
		retryMS = httpmw.RetryAfterDelay(s.g.cfg.RetryAfter, rand.Float64()).Milliseconds() //nolint:gosec // a jitter, no secret
	}
	return &ending{code: code, reason: p.Code, frame: retryErrorFrame(p, retryMS)}
}

// failed ends the session for an error of a port: resync_required with its frame; the
// problem kinds of authentication and authorization with their close codes; an unavailable
// database (tx.Classify made it problem.ErrUnavailable) with 1013 (try again later) after an
// error frame unavailable with retry_after_ms, logged as a warning; anything else is logged
// and closes with 1011 (internal), which the client may resume after a pause.
func (s *session) failed(err error) *ending {
	if re, ok := syncmod.IsResync(err); ok {
		return &ending{code: CloseResyncRequired, reason: "resync_required", frame: resyncFrame(re.Check)}
	}
	switch {
	case errors.Is(err, problem.ErrUnauthenticated):
		return s.fatal(CloseUnauthenticated, err)
	case errors.Is(err, problem.ErrDevicePending), errors.Is(err, problem.ErrForbidden), errors.Is(err, problem.ErrNotFound):
		return s.fatal(CloseForbidden, err)
	case s.ctx.Err() != nil:
		return dropped
	case errors.Is(err, problem.ErrUnavailable):
		s.g.log.WarnContext(s.ctx, "gateway connection lost the database: closed with 1013", "error", err.Error(),
			"principal_id", s.who.PrincipalID.String())
		return s.fatal(CloseTryAgainLater, err)
	}
	s.g.log.ErrorContext(s.ctx, "gateway connection failed", "error", err.Error(), "principal_id", s.who.PrincipalID.String())
	return s.fatal(CloseInternal, err)
}

// refused ends the session for what the reader reported.
func (s *session) refused(err error) *ending {
	switch {
	case errors.Is(err, errConnEnded):
		return dropped
	case errors.Is(err, problem.ErrPayloadTooLarge):
		return s.fatal(CloseFrameTooLarge, err)
	case errors.Is(err, errPanicked):
		return s.fatal(CloseInternal, err)
	}
	return s.fatal(CloseBadFrame, err)
}

// goingAway ends the session on shutdown (or when the tail stopped, which only happens then).
var goingAway = &ending{code: CloseGoingAway, reason: "server shutting down"}

// open starts the session: authentication, the start (hello or resume), the filter. Then the
// session is live: the hub queues batches on it.
func (s *session) open() *ending {
	start, end := s.handshake()
	if end != nil {
		return end
	}
	// Registered before the snapshot or the check reads the head, so that no event falls
	// between the head and the first live batch: whatever the tail delivers at or below the
	// head is skipped, whatever lies between the head and the first batch is caught up.
	s.g.hub.add(s)
	if end := s.recheck(); end != nil {
		return end
	}
	s.cork.cork()
	switch {
	case start.Op == OpHello:
		end = s.ready()
	case start.Consumer != "":
		end = s.resumeConsumer(start.Consumer)
	default:
		end = s.resume(start.After, start.Epoch)
	}
	if err := s.cork.uncork(); err != nil && end == nil {
		end = dropped
	}
	if end != nil {
		return end
	}
	// The filter's Scope is read after the head, so it holds every grant change up to the
	// head; a later one arrives as permissions.changed and refreshes it.
	f, err := s.g.deps.Delivery.For(s.ctx)
	if err != nil {
		return s.failed(err)
	}
	s.filter = f
	return nil
}

// handshake authenticates the connection (when the upgrade did not) and waits for hello or
// resume, answering pings, and for the log tail to be ready, all within
// gateway.auth_timeout of the upgrade.
func (s *session) handshake() (ClientFrame, *ending) {
	deadline := time.NewTimer(s.g.cfg.AuthTimeout)
	defer deadline.Stop()
	for {
		m, ok := s.takeInbound()
		if !ok {
			select {
			case <-s.wake:
				if r := s.credentialEnded(); r != "" {
					return ClientFrame{}, credentialEnding(r)
				}
			case <-deadline.C:
				return ClientFrame{}, &ending{code: CloseAuthTimeout, reason: "auth timeout"}
			case <-s.g.closing:
				return ClientFrame{}, goingAway
			}
			continue
		}
		if m.err != nil {
			return ClientFrame{}, s.refused(m.err)
		}
		f := m.frame
		switch {
		case !s.authed && f.Op != OpAuth:
			return ClientFrame{}, s.fatal(CloseUnauthenticated, problem.New(problem.ErrUnauthenticated,
				"The first frame must be auth when the upgrade carries no Authorization header."))
		case !s.authed:
			if end := s.authenticate(f.Token); end != nil {
				return ClientFrame{}, end
			}
		case f.Op == OpPing:
			if end := s.send(pongFrame); end != nil {
				return ClientFrame{}, end
			}
		case f.Op == OpHeartbeat:
			if end := s.agentHeartbeat(f); end != nil {
				return ClientFrame{}, end
			}
		case f.Op == OpHello, f.Op == OpResume:
			// The tail must know where it starts before the connection subscribes: a
			// subscription made earlier would get its first batch only at the next commit,
			// and the events between the connection's head and the tail's start would wait
			// for it.
			select {
			case <-s.g.deps.Tail.Ready():
				return f, nil
			case <-deadline.C:
				return ClientFrame{}, s.fatal(CloseTryAgainLater, errTailNotReady)
			case <-s.g.closing:
				return ClientFrame{}, goingAway
			}
		default:
			return ClientFrame{}, s.fatal(CloseBadFrame, problem.Validation(problem.FieldError{
				Field: "op", Message: "auth is only the first frame of a connection without an Authorization header",
			}))
		}
	}
}

// authenticate authenticates the token of the auth frame and admits its actor.
func (s *session) authenticate(token string) *ending {
	a, err := s.g.deps.Authenticator.Authenticate(s.ctx, token)
	if err != nil {
		if errors.Is(err, problem.ErrUnauthenticated) && s.g.deps.FailedAuth != nil {
			s.g.deps.FailedAuth.Failed(s.addr)
		}
		return s.failed(err)
	}
	ctx := actor.With(s.ctx, a)
	if err := s.g.admit(ctx); err != nil {
		return s.failed(err)
	}
	s.ctx, s.who, s.authed, s.token, s.expiresAt = ctx, a, true, token, a.ExpiresAt
	s.mu.Lock()
	s.cred, s.authedCred = credentialOf(a), true
	s.mu.Unlock()
	return nil
}

// credentialEnded returns why the session's credential ended; empty while it has not.
func (s *session) credentialEnded() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.credEnded
}

// recheck authenticates the session's token once more, now that the hub is registered: a
// revocation, deactivation or expiry before it was not seen by the hub. It ends the session
// with CloseUnauthenticated then (the reason cannot be told apart, as for REST), and forgets
// the token.
func (s *session) recheck() *ending {
	token := s.token
	s.token = ""
	if _, err := s.g.deps.Authenticator.Authenticate(s.ctx, token); err != nil {
		return s.failed(err)
	}
	return nil
}

// ready answers hello: the snapshot, then live events after its head.
func (s *session) ready() *ending {
	view, err := s.g.deps.Snapshot.Build(s.ctx)
	if err != nil {
		return s.failed(err)
	}
	body, err := s.g.deps.SnapshotEncoder.EncodeSnapshot(view)
	if err != nil {
		return s.failed(err)
	}
	if end := s.send(readyFrame(body)); end != nil {
		return end
	}
	s.cursor, s.told, s.epoch = view.HeadSeq, view.HeadSeq, view.SyncEpoch
	return nil
}

// resume answers resume: the check (resync_required when the cursor cannot be served), the
// pages up to the head, catchup.complete.
func (s *session) resume(after int64, epoch syncmod.CursorEpoch) *ending {
	res, err := s.g.deps.CatchUp.Check(s.ctx, syncmod.CheckInput{After: after, Epoch: epoch})
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		return s.failed(err)
	}
	s.epoch, s.cursor, s.told = res.SyncEpoch, after, after
	if end := s.catchUp(res.HeadSeq); end != nil {
		return end
	}
	if end := s.send(cursorFrame(OpCatchUpComplete, s.cursor)); end != nil {
		return end
	}
	s.told = s.cursor
	return nil
}

// catchUp pages from the cursor up to head (every seq up to head is committed), writing an
// event frame per event and a cursor frame after each page that ends short of head with
// events the client could not see. It stops early, going away, when the gateway shuts down.
func (s *session) catchUp(head int64) *ending {
	var frame []byte
	for s.cursor < head {
		select {
		case <-s.g.closing:
			return goingAway
		default:
		}
		// The frames of the previous page go out before the next is read.
		if s.cork.flush() != nil {
			return dropped
		}
		page, err := s.g.deps.CatchUp.Page(s.ctx, syncmod.PageInput{After: s.cursor, Head: head})
		if err != nil {
			return s.failed(err)
		}
		for _, env := range page.Events {
			frame = appendEventFrame(frame[:0], env)
			if end := s.send(frame); end != nil {
				return end
			}
			if seq, ok := envelopeSeq(env); ok {
				s.told = max(s.told, seq)
			}
		}
		if page.Release != nil {
			page.Release() // every envelope was copied into its frame
		}
		s.cursor = max(s.cursor, page.NextCursor)
		if s.told < s.cursor && s.cursor < head {
			if end := s.send(cursorFrame(OpCursor, s.cursor)); end != nil {
				return end
			}
			s.told = s.cursor
		}
	}
	return nil
}

// envelopeSeq reads the seq of an envelope, its first member (domain.AppendEnvelope always
// writes it first).
func envelopeSeq(env []byte) (int64, bool) {
	rest, ok := bytes.CutPrefix(env, []byte(`{"seq":`))
	if !ok {
		return 0, false
	}
	end := bytes.IndexByte(rest, ',')
	if end < 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	return n, err == nil
}

// inbound handles a client frame after the start: ping, ack and an agent's heartbeat.
func (s *session) inbound(m inbound) *ending {
	switch {
	case m.err != nil:
		return s.refused(m.err)
	case m.frame.Op == OpPing:
		return s.send(pongFrame)
	case m.frame.Op == OpAck:
		if end := s.overRate(); end != nil {
			return end
		}
		return s.ack(m.frame.Seq)
	case m.frame.Op == OpHeartbeat:
		if end := s.overRate(); end != nil {
			return end
		}
		return s.agentHeartbeat(m.frame)
	}
	return s.fatal(CloseBadFrame, problem.Validation(problem.FieldError{
		Field: "op", Message: "the stream has started: only ping, ack and heartbeat are expected",
	}))
}

// errFrameWrites is the problem of a frame that writes beyond its token's write rate.
var errFrameWrites = problem.New(problem.ErrRateLimited,
	"This connection's token has sent too many writes. Reconnect after retry_after_ms.")

// overRate takes a write of the connection's token from Deps.FrameWrites for a frame that
// writes (ack, heartbeat), as its REST operation would: nil when it may write; else the frame
// is not carried out and the session ends with error too_many_requests, retry_after_ms the
// bucket's wait (at least one millisecond), and 1013 (spec 03).
func (s *session) overRate() *ending {
	if s.g.deps.FrameWrites == nil {
		return nil
	}
	ok, wait := s.g.deps.FrameWrites.Allow(httpmw.ActorKeyOf(s.who))
	if ok {
		return nil
	}
	p := problem.From(s.ctx, errFrameWrites)
	ms := max(1, (wait + time.Millisecond - 1).Milliseconds())
	return &ending{code: CloseTryAgainLater, reason: p.Code, frame: retryErrorFrame(p, ms)}
}

// errNotAgent refuses the heartbeat frame of a principal that is no agent: only agents
// report presence (spec 03, "Presence"), so the client sent a frame its kind has no use for.
var errNotAgent = problem.Validation(problem.FieldError{
	Field: "op", Message: "heartbeat is sent by agents only: this connection's principal is no agent",
})

// agentHeartbeat hands an agent's heartbeat frame to Deps.Heartbeats; nothing is answered
// (a change of the agent's presence arrives as agent.presence_changed). A principal that is
// no agent, or a billing mode the agents module refuses, is a bad frame (4000
// validation_failed); any other error ends the session as failed decides.
func (s *session) agentHeartbeat(f ClientFrame) *ending {
	if s.g.deps.Heartbeats == nil {
		return s.fatal(CloseBadFrame, errNoHeartbeats)
	}
	if s.who.Kind != actor.KindAgent {
		return s.fatal(CloseBadFrame, errNotAgent)
	}
	if err := s.g.deps.Heartbeats.Heartbeat(s.ctx, f.BillingMode, f.HasBillingMode); err != nil {
		if errors.Is(err, problem.ErrValidation) {
			return s.fatal(CloseBadFrame, err)
		}
		return s.failed(err)
	}
	return nil
}

// beat is one heartbeat: a WebSocket ping (the peer answering none for two intervals is
// closed), and a frame the client can see (a browser cannot see pings): the cursor when
// live events it could not see advanced it, else a heartbeat.
func (s *session) beat() *ending {
	if s.pinging {
		s.missed++
		if s.missed >= 2 {
			return &ending{code: CloseHeartbeatTimeout, reason: "heartbeat timeout"}
		}
	} else {
		s.pinging = true
		ctx := s.ctx
		s.helpers.Go(func() {
			// A failed ping needs nothing more: the reader reports a dead connection.
			if s.conn.Ping(ctx) == nil {
				s.queue(func() { s.ponged = true })
			}
		})
	}
	if s.told < s.cursor {
		s.told = s.cursor
		return s.send(cursorFrame(OpCursor, s.cursor))
	}
	return s.send(heartbeatFrame)
}

// deliver writes the events of a live batch the receiver may see now. Events at or below
// the cursor are skipped (they came by the snapshot or by catch-up). When the batch's next
// event is not the cursor's successor, events are missing from the live stream: retention
// dropped them before the tail read them (a batch cannot start after the cursor otherwise,
// since the subscription is made on a ready tail before the head is read). The connection
// then catches up through the whole batch instead, so that it gets resync_required rather
// than a silent gap, or whatever else is missing.
func (s *session) deliver(b syncmod.Batch) *ending {
	if b.Last() <= s.cursor {
		return nil
	}
	i := 0
	for b.Events[i].Seq <= s.cursor {
		i++
	}
	if b.Events[i].Seq != s.cursor+1 {
		return s.catchUpThenRefresh(b.Last())
	}
	shared, err := s.g.batches.get(s.ctx, b)
	if err != nil {
		return s.failed(err)
	}
	frames := shared.framesFor(s.filter.Receiver())
	for ; i < len(b.Events); i++ {
		e := b.Events[i]
		ok, err := s.filter.Allow(s.ctx, e)
		if err != nil {
			return s.failed(err)
		}
		if ok {
			if end := s.send(frames[i]); end != nil {
				return end
			}
			s.told = e.Seq
		}
		s.cursor = e.Seq
	}
	return nil
}

// catchUpThenRefresh catches up to head and refreshes the filter's Scope, since the pages may
// have carried a permissions.changed the filter did not see.
func (s *session) catchUpThenRefresh(head int64) *ending {
	if end := s.catchUp(head); end != nil {
		return end
	}
	if err := s.filter.Refresh(s.ctx); err != nil {
		return s.failed(err)
	}
	return nil
}

// resubscribe handles the end of the session's registration with the hub. A connection
// that lagged (gateway.send_buffer batches were waiting: it fell that far behind) registers
// again before the check, as at the start, and catches up from its own cursor in place; if
// it lags again within a heartbeat interval it cannot keep up, and it is closed with
// CloseSlowConsumer to resume later. When the tail dropped the hub itself, every connection
// catches up alike, without that count. A tail that stopped means the process stops.
func (s *session) resubscribe(err error) *ending {
	if !errors.Is(err, syncmod.ErrLagged) {
		return goingAway
	}
	if !errors.Is(err, errHubLagged) {
		now := time.Now()
		if !s.lastLag.IsZero() && now.Sub(s.lastLag) < s.g.cfg.HeartbeatInterval {
			return &ending{code: CloseSlowConsumer, reason: "slow consumer"}
		}
		s.lastLag = now
	}
	s.g.hub.add(s)
	res, err := s.g.deps.CatchUp.Check(s.ctx, syncmod.CheckInput{After: s.cursor, Epoch: syncmod.EpochOf(s.epoch)})
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		return s.failed(err)
	}
	return s.catchUpThenRefresh(res.HeadSeq)
}

// errNoConsumers refuses consumer frames on a gateway built without consumers.
var errNoConsumers = problem.Validation(problem.FieldError{Field: "consumer", Message: "durable consumers are not available"})

// errNoHeartbeats refuses heartbeat frames on a gateway built without Deps.Heartbeats.
var errNoHeartbeats = problem.Validation(problem.FieldError{Field: "op", Message: "heartbeat frames are not available"})

// resumeConsumer answers resume with a consumer: the consumer's acked_seq and sync epoch are
// the cursor, and everything after is resume's (spec 03, "Durable consumers"): the same check,
// the same pages, what catch-up delivers to the actor at delivery time. Later acks name it.
func (s *session) resumeConsumer(name string) *ending {
	if s.g.deps.Consumers == nil {
		return s.fatal(CloseBadFrame, errNoConsumers)
	}
	c, err := s.g.deps.Consumers.Get(s.ctx, name)
	if err != nil {
		return s.consumerFailed(err)
	}
	s.consumer = c.Name
	return s.resume(c.AckedSeq, syncmod.EpochOf(c.SyncEpoch))
}

// ack answers an ack frame: the consumer moves forward to seq (never back, idempotently) and
// the client learns its acked_seq from the acked frame.
func (s *session) ack(seq int64) *ending {
	if s.consumer == "" || s.g.deps.Consumers == nil {
		return s.fatal(CloseBadFrame, problem.Validation(problem.FieldError{
			Field: "op", Message: "ack needs a connection resumed with a consumer",
		}))
	}
	c, err := s.g.deps.Consumers.Ack(s.ctx, s.consumer, seq)
	if err != nil {
		return s.consumerFailed(err)
	}
	return s.send(ackedFrame(c.Name, c.AckedSeq))
}

// consumerFailed ends the session for an error of the consumers: a bad name or a refused ack
// (above the head, an earlier epoch) is the client's mistake, a bad frame (4000) with the
// problem's code; anything else as failed decides.
func (s *session) consumerFailed(err error) *ending {
	if errors.Is(err, problem.ErrValidation) || errors.Is(err, problem.ErrConflict) {
		return s.fatal(CloseBadFrame, err)
	}
	return s.failed(err)
}
