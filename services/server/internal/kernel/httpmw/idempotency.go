package httpmw

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/problem"
)

// The headers of the idempotency protocol.
const (
	// IdempotencyKeyHeader carries the client's key for one logical POST, repeated unchanged
	// on every retry of it.
	IdempotencyKeyHeader = "Idempotency-Key"
	// IdempotencyReplayedHeader is set to "true" on a response that was stored for an earlier
	// request with the same key and is sent again, so a client can tell a replay from a run.
	IdempotencyReplayedHeader = "Idempotency-Replayed"
)

// MaxIdempotencyKeyLen is the longest accepted Idempotency-Key, in bytes (every accepted byte
// is one printable ASCII character).
const MaxIdempotencyKeyLen = 255

// TxRunner runs fn in one transaction carried by the context fn receives; fn returning an
// error, or a failed commit, rolls everything back and returns the error (wrapped with %w).
// Use cases that call RunInTx with that context join the transaction. *tx.Runner implements
// it.
type TxRunner interface {
	// RunInTx runs fn and commits; any error rolls back and is returned.
	RunInTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// StoredResponse is a successful (2xx) response kept for replay: the status, the two headers
// a client needs to act on it, and the body.
type StoredResponse struct {
	// Status is the HTTP status, 200 to 299; 0 means no response is stored yet.
	Status int
	// ContentType is the Content-Type header ("" when the response had none).
	ContentType string
	// Location is the Location header ("" when the response had none).
	Location string
	// Body is the whole body.
	Body []byte
}

// IdempotencyRecord is what the store keeps for one key of one actor.
type IdempotencyRecord struct {
	// Fingerprint identifies the request that claimed the key: the SHA-256 of its method,
	// path with query, and body.
	Fingerprint []byte
	// CreatedAt is when the key was claimed; the record is live until CreatedAt + ttl.
	CreatedAt time.Time
	// Response is the stored response; its Status is 0 while the claiming transaction runs.
	Response StoredResponse
}

// IdempotencyStore keeps the keys of the Idempotency middleware, one row per actor and key.
// Every method runs in the transaction of ctx, which the middleware opens around the
// handler, so the stored response commits together with the handler's writes or not at all.
// The instance module's postgres adapter implements it.
type IdempotencyStore interface {
	// Claim inserts the key for actorID with the request's fingerprint, claimed at at and with
	// no response, unless the actor already has that key (INSERT ... ON CONFLICT DO NOTHING);
	// claimed reports whether this call inserted it. While another transaction holds an
	// uncommitted claim of the same key, Claim waits for it to end: this is what makes a
	// concurrent duplicate wait for the first request instead of running beside it.
	Claim(ctx context.Context, actorID uuid.UUID, key string, fingerprint []byte, at time.Time) (claimed bool, err error)
	// Load returns the record of the key and locks its row until the transaction ends; found
	// is false when the actor has no such key (it was purged or released since Claim).
	Load(ctx context.Context, actorID uuid.UUID, key string) (rec IdempotencyRecord, found bool, err error)
	// Reclaim overwrites the record of a key Load locked (expired, or without a response) as
	// a fresh claim: the new fingerprint, claimed at at, no response.
	Reclaim(ctx context.Context, actorID uuid.UUID, key string, fingerprint []byte, at time.Time) error
	// Save stores resp as the response of the key this transaction claimed.
	Save(ctx context.Context, actorID uuid.UUID, key string, resp StoredResponse) error
	// Release deletes the key this transaction claimed, for a response that must not be kept.
	Release(ctx context.Context, actorID uuid.UUID, key string) error
}

// errRollback ends the middleware's transaction without keeping anything: the handler
// failed, or the request was answered from the store.
var errRollback = errors.New("idempotency: roll back")

// Idempotency makes a POST that carries an Idempotency-Key safe to retry: the same key from
// the same actor within ttl gets the first successful response again, with
// Idempotency-Replayed: true, and the handler does not run (so nothing is written twice).
// It must run inside authentication: the actor in the context owns the key.
//
// It wraps the handler in one transaction of runner, which every use case joins: it claims
// the key (a concurrent duplicate waits on that claim until the first request ends), runs the
// handler into a buffer with the transaction's context, stores a 2xx response in the same
// transaction, commits, and only then sends the response. So the handler's writes and the
// stored response commit together, exactly once. A response that is not 2xx is sent as it is
// and rolled back, key included, so a retry runs again. A failed commit (or a commit-phase
// hook's error) answers its problem through problem.Write, a 500 for anything but a problem
// kind, and nothing of the handler's response is sent.
//
// A live key whose stored request differs (another method, path with query, or body) answers
// 409 conflict; an expired key (claimed ttl or longer ago, by clk) is claimed anew and the
// handler runs. A 2xx response marked Cache-Control: no-store (a new token's secret) is sent
// but not kept: its key is released in the same transaction, so the secret is never stored
// and a retry runs again. A key must be 1 to MaxIdempotencyKeyLen printable ASCII characters
// (0x21 to 0x7e), given once; anything else answers 400 validation_failed naming the header,
// without echoing it. Requests other than POST, without the header, without an actor (a
// public operation) or from a device still pending approval pass through untouched.
//
// claimAttempts (http.idempotency_claim_attempts) bounds the claim loop: a key that disappears
// between the failed claim and the read (a purge or a released claim) is claimed again, and
// only a key that keeps disappearing that many times makes the request fail.
//
// A nil store or runner, a ttl of zero or less, or fewer than one claim attempt is a wiring
// mistake and panics; a nil clk means clock.System().
func Idempotency(store IdempotencyStore, runner TxRunner, ttl time.Duration, claimAttempts int, clk clock.Clock) func(http.Handler) http.Handler {
	if store == nil || runner == nil {
		panic("httpmw: Idempotency: nil store or runner")
	}
	if ttl <= 0 {
		panic(fmt.Sprintf("httpmw: Idempotency(ttl %v): ttl must be positive", ttl))
	}
	if claimAttempts < 1 {
		panic(fmt.Sprintf("httpmw: Idempotency(claim attempts %d): want at least 1", claimAttempts))
	}
	if clk == nil {
		clk = clock.System()
	}
	m := &idempotency{store: store, runner: runner, ttl: ttl, attempts: claimAttempts, clock: clk}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				next.ServeHTTP(w, r)
				return
			}
			keys := r.Header.Values(IdempotencyKeyHeader)
			if len(keys) == 0 {
				next.ServeHTTP(w, r)
				return
			}
			a, ok := actor.From(r.Context())
			if !ok || a.DevicePending {
				// No actor to own the key, or a device that may do nothing yet: the
				// handler answers as it would without the header, and a pending device
				// cannot get a replay of what the principal's approved devices did.
				next.ServeHTTP(w, r)
				return
			}
			if len(keys) != 1 || !validIdempotencyKey(keys[0]) {
				problem.Write(w, r, problem.Validation(problem.FieldError{
					Field:   IdempotencyKeyHeader,
					Message: fmt.Sprintf("must be given once, as 1 to %d printable ASCII characters without spaces", MaxIdempotencyKeyLen),
				}))
				return
			}
			m.serve(w, r, next, a.PrincipalID, keys[0])
		})
	}
}

type idempotency struct {
	store  IdempotencyStore
	runner TxRunner
	ttl    time.Duration
	// attempts is http.idempotency_claim_attempts.
	attempts int
	clock    clock.Clock
}

// outcome is what the transaction decided; the response is written after it ended.
type outcome struct {
	conflict bool
	replay   *StoredResponse
	ran      *bufferedResponse
}

func (m *idempotency) serve(w http.ResponseWriter, r *http.Request, next http.Handler, actorID uuid.UUID, key string) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// A body cut by BodyLimit is a 413; anything else a 500.
		problem.Write(w, r, fmt.Errorf("idempotency: read body: %w", err))
		return
	}
	fp := fingerprint(r, body)
	var out outcome
	err = m.runner.RunInTx(r.Context(), func(ctx context.Context) error {
		rec, fresh, err := m.claim(ctx, actorID, key, fp)
		if err != nil {
			return err
		}
		if !fresh {
			if bytes.Equal(rec.Fingerprint, fp) {
				out.replay = &rec.Response
			} else {
				out.conflict = true
			}
			return errRollback
		}
		buf := newBufferedResponse(w.Header())
		inner := r.WithContext(ctx)
		inner.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(buf, inner)
		out.ran = buf
		switch {
		case !buf.succeeded():
			return errRollback
		case buf.noStore():
			if err := m.store.Release(ctx, actorID, key); err != nil {
				return fmt.Errorf("idempotency: release key: %w", err)
			}
			return nil
		}
		if err := m.store.Save(ctx, actorID, key, buf.stored()); err != nil {
			return fmt.Errorf("idempotency: save response: %w", err)
		}
		return nil
	})
	switch {
	case err != nil && !errors.Is(err, errRollback):
		// Nothing was committed, so nothing of the handler's answer may reach the client.
		problem.Write(w, r, err)
	case out.conflict:
		problem.Write(w, r, problem.New(problem.ErrConflict,
			"This Idempotency-Key was already used for a different request; use a new key for a new request."))
	case out.replay != nil:
		writeReplay(w, *out.replay)
	default:
		out.ran.writeTo(w)
	}
}

// claim makes the key this transaction's, or returns the live record that answers it: fresh
// is true when the handler must run (the key was new, expired, or had no response).
func (m *idempotency) claim(ctx context.Context, actorID uuid.UUID, key string, fp []byte) (IdempotencyRecord, bool, error) {
	now := m.clock.Now()
	for range m.attempts {
		claimed, err := m.store.Claim(ctx, actorID, key, fp, now)
		if err != nil {
			return IdempotencyRecord{}, false, fmt.Errorf("idempotency: claim key: %w", err)
		}
		if claimed {
			return IdempotencyRecord{}, true, nil
		}
		rec, found, err := m.store.Load(ctx, actorID, key)
		if err != nil {
			return IdempotencyRecord{}, false, fmt.Errorf("idempotency: load key: %w", err)
		}
		if !found {
			continue // deleted between the two statements: claim it again
		}
		if rec.Response.Status != 0 && now.Sub(rec.CreatedAt) < m.ttl {
			return rec, false, nil
		}
		if err := m.store.Reclaim(ctx, actorID, key, fp, now); err != nil {
			return IdempotencyRecord{}, false, fmt.Errorf("idempotency: reclaim key: %w", err)
		}
		return IdempotencyRecord{}, true, nil
	}
	return IdempotencyRecord{}, false, fmt.Errorf("idempotency: key vanished %d times between claim and load", m.attempts)
}

// validIdempotencyKey reports whether key is 1 to MaxIdempotencyKeyLen bytes of printable
// ASCII without space.
func validIdempotencyKey(key string) bool {
	if key == "" || len(key) > MaxIdempotencyKeyLen {
		return false
	}
	for i := range len(key) {
		if key[i] < 0x21 || key[i] > 0x7e {
			return false
		}
	}
	return true
}

// fingerprint is the SHA-256 of the method, the request target (path and query, as sent)
// and the body. Neither the method nor an escaped target contains a NUL byte, so the NUL
// separators make the encoding unambiguous.
func fingerprint(r *http.Request, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(r.Method))
	h.Write([]byte{0})
	h.Write([]byte(r.URL.RequestURI()))
	h.Write([]byte{0})
	h.Write(body)
	return h.Sum(nil)
}

// writeReplay sends a stored response again.
func writeReplay(w http.ResponseWriter, s StoredResponse) {
	h := w.Header()
	if s.ContentType != "" {
		h.Set("Content-Type", s.ContentType)
	}
	if s.Location != "" {
		h.Set("Location", s.Location)
	}
	h.Set(IdempotencyReplayedHeader, "true")
	w.WriteHeader(s.Status)
	_, _ = w.Write(s.Body)
}

// bufferedResponse holds a handler's response until the transaction has committed. It starts
// with a copy of the real writer's headers (the request id), so the handler sees what it
// would see without the buffer. It has no Unwrap on purpose: nothing may reach the
// connection before the commit.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newBufferedResponse(h http.Header) *bufferedResponse {
	return &bufferedResponse{header: h.Clone()}
}

func (b *bufferedResponse) Header() http.Header { return b.header }

// WriteHeader keeps the first final status; informational ones are dropped, as they would be
// sent before the real one and mean nothing to a retry.
func (b *bufferedResponse) WriteHeader(code int) {
	if b.status == 0 && code >= 200 {
		b.status = code
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// code is the status net/http would send: 200 when the handler wrote nothing.
func (b *bufferedResponse) code() int {
	if b.status == 0 {
		return http.StatusOK
	}
	return b.status
}

func (b *bufferedResponse) succeeded() bool {
	return b.code() >= 200 && b.code() <= 299
}

// noStore reports whether the response forbids being stored (Cache-Control: no-store, RFC
// 9111), as a response carrying a secret does.
func (b *bufferedResponse) noStore() bool {
	for _, v := range b.header.Values("Cache-Control") {
		for d := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(d), "no-store") {
				return true
			}
		}
	}
	return false
}

func (b *bufferedResponse) stored() StoredResponse {
	return StoredResponse{
		Status:      b.code(),
		ContentType: b.header.Get("Content-Type"),
		Location:    b.header.Get("Location"),
		Body:        bytes.Clone(b.body.Bytes()),
	}
}

// writeTo sends the buffered response on w with exactly the headers the handler left.
func (b *bufferedResponse) writeTo(w http.ResponseWriter) {
	h := w.Header()
	for k := range h {
		delete(h, k)
	}
	for k, v := range b.header {
		h[k] = v
	}
	w.WriteHeader(b.code())
	_, _ = w.Write(b.body.Bytes())
}
