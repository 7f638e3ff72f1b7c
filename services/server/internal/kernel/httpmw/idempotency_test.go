package httpmw_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/httpmw"
	"bothy.example.com/server/internal/kernel/problem"
)

const ttl = 24 * time.Hour

// claimAttempts is the http.idempotency_claim_attempts of these tests.
const claimAttempts = 3

var (
	alex  = actor.Actor{PrincipalID: uuid.MustParse("0190a6b2-7c1e-7d3a-9f00-00000000a1e5"), Kind: actor.KindPerson}
	sam   = actor.Actor{PrincipalID: uuid.MustParse("0190a6b2-7c1e-7d3a-9f00-0000000005a3"), Kind: actor.KindPerson}
	epoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
)

var errStore = errors.New("store down")

// slot names one stored key.
type slot struct {
	actor uuid.UUID
	key   string
}

// fakeTx is the transaction the fake runner puts in the context.
type fakeTx struct{ id int64 }

type txKey struct{}

// fakeStore is an in-memory IdempotencyStore with the fake runner's transactions: the runner
// runs one transaction at a time (as the claim's unique index serializes duplicates in
// PostgreSQL), keeps a copy of the rows at its start and puts it back on rollback.
type fakeStore struct {
	mu     sync.Mutex // guards rows, calls and the failure switches
	txMu   sync.Mutex // held for a whole transaction
	rows   map[slot]httpmw.IdempotencyRecord
	calls  []string
	nextTx atomic.Int64

	failClaim, failLoad, failReclaim, failSave, failRelease, failCommit error
	// vanish makes the first Load after a failed Claim find nothing, as when the row was
	// purged between the two statements.
	vanish bool
}

func newFakeStore() *fakeStore {
	return &fakeStore{rows: map[slot]httpmw.IdempotencyRecord{}}
}

// RunInTx implements httpmw.TxRunner.
func (s *fakeStore) RunInTx(ctx context.Context, fn func(ctx context.Context) error) (err error) {
	s.txMu.Lock()
	defer s.txMu.Unlock()
	s.mu.Lock()
	saved := maps.Clone(s.rows)
	s.mu.Unlock()
	rollback := func() {
		s.mu.Lock()
		s.rows = saved
		s.mu.Unlock()
	}
	defer func() {
		if p := recover(); p != nil {
			rollback()
			panic(p)
		}
	}()
	if err := fn(context.WithValue(ctx, txKey{}, fakeTx{id: s.nextTx.Add(1)})); err != nil {
		rollback()
		return fmt.Errorf("tx: %w", err)
	}
	s.mu.Lock()
	failCommit := s.failCommit
	s.mu.Unlock()
	if failCommit != nil {
		rollback()
		return fmt.Errorf("tx: commit: %w", failCommit)
	}
	return nil
}

func (s *fakeStore) inTx(ctx context.Context, op string) error {
	if _, ok := ctx.Value(txKey{}).(fakeTx); !ok {
		return fmt.Errorf("%s outside a transaction", op)
	}
	s.calls = append(s.calls, op)
	return nil
}

func (s *fakeStore) Claim(ctx context.Context, actorID uuid.UUID, key string, fingerprint []byte, at time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.inTx(ctx, "claim"); err != nil {
		return false, err
	}
	if s.failClaim != nil {
		return false, s.failClaim
	}
	k := slot{actorID, key}
	if _, ok := s.rows[k]; ok {
		return false, nil
	}
	s.rows[k] = httpmw.IdempotencyRecord{Fingerprint: bytes.Clone(fingerprint), CreatedAt: at}
	return true, nil
}

func (s *fakeStore) Load(ctx context.Context, actorID uuid.UUID, key string) (httpmw.IdempotencyRecord, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.inTx(ctx, "load"); err != nil {
		return httpmw.IdempotencyRecord{}, false, err
	}
	if s.failLoad != nil {
		return httpmw.IdempotencyRecord{}, false, s.failLoad
	}
	if s.vanish {
		s.vanish = false
		delete(s.rows, slot{actorID, key})
		return httpmw.IdempotencyRecord{}, false, nil
	}
	rec, ok := s.rows[slot{actorID, key}]
	return rec, ok, nil
}

func (s *fakeStore) Reclaim(ctx context.Context, actorID uuid.UUID, key string, fingerprint []byte, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.inTx(ctx, "reclaim"); err != nil {
		return err
	}
	if s.failReclaim != nil {
		return s.failReclaim
	}
	s.rows[slot{actorID, key}] = httpmw.IdempotencyRecord{Fingerprint: bytes.Clone(fingerprint), CreatedAt: at}
	return nil
}

func (s *fakeStore) Save(ctx context.Context, actorID uuid.UUID, key string, resp httpmw.StoredResponse) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.inTx(ctx, "save"); err != nil {
		return err
	}
	if s.failSave != nil {
		return s.failSave
	}
	k := slot{actorID, key}
	rec, ok := s.rows[k]
	if !ok {
		return errors.New("save of an unclaimed key")
	}
	resp.Body = bytes.Clone(resp.Body)
	rec.Response = resp
	s.rows[k] = rec
	return nil
}

func (s *fakeStore) Release(ctx context.Context, actorID uuid.UUID, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.inTx(ctx, "release"); err != nil {
		return err
	}
	if s.failRelease != nil {
		return s.failRelease
	}
	delete(s.rows, slot{actorID, key})
	return nil
}

func (s *fakeStore) row(a actor.Actor, key string) (httpmw.IdempotencyRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.rows[slot{a.PrincipalID, key}]
	return rec, ok
}

func (s *fakeStore) set(f func(s *fakeStore)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *fakeStore) callLog() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// creator is a handler that counts its runs and answers what answer says; it fails the test
// when it runs outside a transaction or cannot read the body.
type creator struct {
	t      *testing.T
	runs   atomic.Int64
	answer func(w http.ResponseWriter, r *http.Request, body []byte, run int64)
}

func (c *creator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, ok := r.Context().Value(txKey{}).(fakeTx); !ok {
		c.t.Error("handler runs outside the transaction")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		c.t.Errorf("handler cannot read the body: %v", err)
	}
	n := c.runs.Add(1)
	c.answer(w, r, body, n)
}

// created answers 201 with a JSON body naming the run, a Location and a header that is not
// replayed.
func created(w http.ResponseWriter, _ *http.Request, body []byte, run int64) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Location", fmt.Sprintf("/api/v1/people/%d", run))
	w.Header().Set("X-Run", fmt.Sprint(run))
	w.WriteHeader(http.StatusCreated)
	_, _ = fmt.Fprintf(w, `{"run":%d,"echo":%q}`, run, body)
}

type harness struct {
	store   *fakeStore
	clock   *clock.Fake
	handler *creator
	mw      http.Handler
}

func newHarness(t *testing.T, answer func(http.ResponseWriter, *http.Request, []byte, int64)) *harness {
	t.Helper()
	h := &harness{store: newFakeStore(), clock: clock.NewFake(epoch), handler: &creator{t: t, answer: answer}}
	h.mw = httpmw.Idempotency(h.store, h.store, ttl, claimAttempts, h.clock)(h.handler)
	return h
}

// post sends POST target with body as who (nil: no actor) and the given keys.
func (h *harness) post(t *testing.T, who *actor.Actor, target, body string, keys ...string) *httptest.ResponseRecorder {
	t.Helper()
	return h.send(t, http.MethodPost, who, target, body, keys...)
}

func (h *harness) send(t *testing.T, method string, who *actor.Actor, target, body string, keys ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := quietNew(t, method, target, strings.NewReader(body))
	if who != nil {
		r = r.WithContext(actor.With(r.Context(), *who))
	}
	for _, k := range keys {
		r.Header.Add("Idempotency-Key", k)
	}
	w := httptest.NewRecorder()
	h.mw.ServeHTTP(w, r)
	return w
}

func TestIdempotencyReplaysTheFirstSuccess(t *testing.T) {
	t.Parallel()
	h := newHarness(t, created)
	first := h.post(t, &alex, "/api/v1/people", `{"handle":"sam"}`, "retry-alex-1")
	if first.Code != http.StatusCreated || first.Header().Get("X-Run") != "1" {
		t.Fatalf("first = %d %v, want 201 from run 1", first.Code, first.Header())
	}
	if got := first.Header().Get("Idempotency-Replayed"); got != "" {
		t.Fatalf("first response has Idempotency-Replayed %q", got)
	}
	rec, ok := h.store.row(alex, "retry-alex-1")
	if !ok || rec.Response.Status != http.StatusCreated || rec.Response.ContentType != "application/json" ||
		rec.Response.Location != "/api/v1/people/1" || !bytes.Equal(rec.Response.Body, first.Body.Bytes()) ||
		!rec.CreatedAt.Equal(epoch) || len(rec.Fingerprint) != 32 {
		t.Fatalf("stored record = %+v, %v", rec, ok)
	}

	h.clock.Advance(ttl - time.Nanosecond)
	second := h.post(t, &alex, "/api/v1/people", `{"handle":"sam"}`, "retry-alex-1")
	if n := h.handler.runs.Load(); n != 1 {
		t.Fatalf("handler ran %d times, want once", n)
	}
	if second.Code != first.Code || !bytes.Equal(second.Body.Bytes(), first.Body.Bytes()) {
		t.Fatalf("replay = %d %s, want %d %s", second.Code, second.Body, first.Code, first.Body)
	}
	for name, want := range map[string]string{
		"Idempotency-Replayed": "true",
		"Content-Type":         "application/json",
		"Location":             "/api/v1/people/1",
		"X-Run":                "",
	} {
		if got := second.Header().Get(name); got != want {
			t.Errorf("replay header %s = %q, want %q", name, got, want)
		}
	}
}

func TestIdempotencyPassesThrough(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		method string
		who    *actor.Actor
		keys   []string
	}{
		{"no key", http.MethodPost, &alex, nil},
		{"get with a key", http.MethodGet, &alex, []string{"k"}},
		{"put with a key", http.MethodPut, &alex, []string{"k"}},
		{"patch with a malformed key", http.MethodPatch, &alex, []string{"has space"}},
		{"delete with a key", http.MethodDelete, &alex, []string{"k"}},
		{"no actor", http.MethodPost, nil, []string{"k"}},
		{"pending device", http.MethodPost, &actor.Actor{PrincipalID: sam.PrincipalID, Kind: actor.KindPerson, DevicePending: true}, []string{"k"}},
		{"pending device, malformed key", http.MethodPost, &actor.Actor{PrincipalID: sam.PrincipalID, Kind: actor.KindPerson, DevicePending: true}, []string{"has space"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := newFakeStore()
			runs := 0
			mw := httpmw.Idempotency(store, store, ttl, claimAttempts, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, ok := r.Context().Value(txKey{}).(fakeTx); ok {
					t.Error("a passed-through request runs in a transaction")
				}
				runs++
				w.WriteHeader(http.StatusCreated)
			}))
			for range 2 {
				r := quietNew(t, tt.method, "/api/v1/people", strings.NewReader(`{}`))
				if tt.who != nil {
					r = r.WithContext(actor.With(r.Context(), *tt.who))
				}
				for _, k := range tt.keys {
					r.Header.Add("Idempotency-Key", k)
				}
				w := httptest.NewRecorder()
				mw.ServeHTTP(w, r)
				if w.Code != http.StatusCreated {
					t.Fatalf("status = %d, want the handler's 201", w.Code)
				}
			}
			if runs != 2 || len(store.callLog()) != 0 {
				t.Fatalf("handler ran %d times, store calls %v; want 2 runs and no store call", runs, store.callLog())
			}
		})
	}
}

func TestIdempotencyRejectsMalformedKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		keys []string
	}{
		{"empty", []string{""}},
		{"too long", []string{strings.Repeat("k", 256)}},
		{"space", []string{"retry alex"}},
		{"tab", []string{"retry\talex"}},
		{"delete char", []string{"retry\x7f"}},
		{"not ascii", []string{"r\u00e9essai"}},
		{"twice", []string{"retry-alex-1", "retry-alex-2"}},
		{"same twice", []string{"retry-alex-1", "retry-alex-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, created)
			w := h.post(t, &alex, "/api/v1/people", `{}`, tt.keys...)
			m := assertProblem(t, w, http.StatusBadRequest, "validation_failed")
			errs, _ := m["errors"].([]any)
			if len(errs) != 1 {
				t.Fatalf("errors = %v, want one naming the header", m["errors"])
			}
			if f, _ := errs[0].(map[string]any); f["field"] != "Idempotency-Key" {
				t.Fatalf("field = %v, want Idempotency-Key", f["field"])
			}
			for _, k := range tt.keys {
				if len(k) > 3 && strings.Contains(w.Body.String(), k) {
					t.Fatalf("the problem echoes the key: %s", w.Body)
				}
			}
			if h.handler.runs.Load() != 0 || len(h.store.callLog()) != 0 {
				t.Fatal("a malformed key reached the handler or the store")
			}
		})
	}
}

func TestIdempotencyAcceptsEveryPrintableKey(t *testing.T) {
	t.Parallel()
	var all strings.Builder
	for c := byte(0x21); c <= 0x7e; c++ {
		all.WriteByte(c)
	}
	for _, key := range []string{"k", all.String(), strings.Repeat("k", 255)} {
		h := newHarness(t, created)
		if w := h.post(t, &alex, "/api/v1/people", `{}`, key); w.Code != http.StatusCreated {
			t.Fatalf("key %q: status %d, want 201", key, w.Code)
		}
		if _, ok := h.store.row(alex, key); !ok {
			t.Fatalf("key %q not stored", key)
		}
	}
}

func TestIdempotencyConflictsOnADifferentRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, target, body string
	}{
		{"other body", "/api/v1/people", `{"handle":"robin"}`},
		{"other path", "/api/v1/agents", `{"handle":"sam"}`},
		{"other query", "/api/v1/people?x=1", `{"handle":"sam"}`},
		{"empty body", "/api/v1/people", ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, created)
			h.post(t, &alex, "/api/v1/people", `{"handle":"sam"}`, "retry-alex-1")
			before, _ := h.store.row(alex, "retry-alex-1")
			w := h.post(t, &alex, tt.target, tt.body, "retry-alex-1")
			m := assertProblem(t, w, http.StatusConflict, "conflict")
			if d, _ := m["detail"].(string); !strings.Contains(d, "Idempotency-Key") {
				t.Fatalf("detail %q does not name the key reuse", d)
			}
			if h.handler.runs.Load() != 1 {
				t.Fatal("the conflicting request ran the handler")
			}
			after, _ := h.store.row(alex, "retry-alex-1")
			if !bytes.Equal(after.Fingerprint, before.Fingerprint) || !bytes.Equal(after.Response.Body, before.Response.Body) {
				t.Fatal("the conflicting request changed the stored record")
			}
		})
	}
}

func TestIdempotencyKeysArePerActor(t *testing.T) {
	t.Parallel()
	h := newHarness(t, created)
	a := h.post(t, &alex, "/api/v1/people", `{"handle":"robin"}`, "shared-key")
	s := h.post(t, &sam, "/api/v1/people", `{"handle":"robin"}`, "shared-key")
	if h.handler.runs.Load() != 2 || a.Header().Get("X-Run") != "1" || s.Header().Get("X-Run") != "2" {
		t.Fatalf("runs = %d, want one per actor", h.handler.runs.Load())
	}
	if s.Header().Get("Idempotency-Replayed") != "" {
		t.Fatal("another actor got a replay")
	}
	// A different body under Sam's key is Sam's business, not a conflict with Alex's.
	if w := h.post(t, &sam, "/api/v1/people", `{"handle":"robin"}`, "shared-key"); w.Header().Get("Idempotency-Replayed") != "true" || w.Header().Get("Location") != "/api/v1/people/2" {
		t.Fatalf("Sam's retry = %d %v, want Sam's own replay", w.Code, w.Header())
	}
}

func TestIdempotencyKeepsNoFailure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		answer func(http.ResponseWriter, *http.Request)
		status int
	}{
		{"problem", func(w http.ResponseWriter, r *http.Request) {
			problem.Write(w, r, problem.New(problem.ErrConflict, "The handle is taken."))
		}, http.StatusConflict},
		{"validation", func(w http.ResponseWriter, r *http.Request) {
			problem.Write(w, r, problem.Validation(problem.FieldError{Field: "handle", Message: "is too short"}))
		}, http.StatusBadRequest},
		{"internal", func(w http.ResponseWriter, r *http.Request) {
			problem.Write(w, r, errors.New("database gone"))
		}, http.StatusInternalServerError},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusSeeOther)
		}, http.StatusSeeOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var wrote atomic.Bool
			h := newHarness(t, func(w http.ResponseWriter, r *http.Request, body []byte, run int64) {
				if run == 1 {
					tt.answer(w, r)
					return
				}
				wrote.Store(true)
				created(w, r, body, run)
			})
			first := h.post(t, &alex, "/api/v1/people", `{"handle":"sam"}`, "retry-alex-1")
			if first.Code != tt.status {
				t.Fatalf("first = %d, want the handler's %d", first.Code, tt.status)
			}
			if _, ok := h.store.row(alex, "retry-alex-1"); ok {
				t.Fatal("a failure left the key claimed")
			}
			second := h.post(t, &alex, "/api/v1/people", `{"handle":"sam"}`, "retry-alex-1")
			if !wrote.Load() || second.Code != http.StatusCreated || second.Header().Get("Idempotency-Replayed") != "" {
				t.Fatalf("retry = %d %v, want a fresh run", second.Code, second.Header())
			}
		})
	}
}

func TestIdempotencyWritesTheHandlersResponseAsIs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		answer func(http.ResponseWriter)
		status int
		body   string
	}{
		{"implicit 200", func(w http.ResponseWriter) { _, _ = io.WriteString(w, "ok") }, http.StatusOK, "ok"},
		{"nothing written", func(http.ResponseWriter) {}, http.StatusOK, ""},
		{"204", func(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) }, http.StatusNoContent, ""},
		{"informational first", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusProcessing)
			w.WriteHeader(http.StatusAccepted)
			w.WriteHeader(http.StatusOK) // superfluous, ignored as net/http does
			_, _ = io.WriteString(w, "queued")
		}, http.StatusAccepted, "queued"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, func(w http.ResponseWriter, _ *http.Request, _ []byte, _ int64) { tt.answer(w) })
			first := h.post(t, &alex, "/api/v1/people", `{}`, "k")
			second := h.post(t, &alex, "/api/v1/people", `{}`, "k")
			for i, w := range []*httptest.ResponseRecorder{first, second} {
				if w.Code != tt.status || w.Body.String() != tt.body {
					t.Fatalf("response %d = %d %q, want %d %q", i+1, w.Code, w.Body, tt.status, tt.body)
				}
			}
			if h.handler.runs.Load() != 1 || second.Header().Get("Idempotency-Replayed") != "true" {
				t.Fatalf("runs = %d, second replayed %q", h.handler.runs.Load(), second.Header().Get("Idempotency-Replayed"))
			}
		})
	}
}

func TestIdempotencyKeyExpires(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		advance time.Duration
		body    string
		runs    int64
	}{
		{"just live", ttl - time.Nanosecond, `{"handle":"sam"}`, 1},
		{"at ttl", ttl, `{"handle":"sam"}`, 2},
		{"long after", 10 * ttl, `{"handle":"sam"}`, 2},
		{"expired, other body", ttl, `{"handle":"robin"}`, 2},
		{"live, other body", time.Hour, `{"handle":"robin"}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, created)
			h.post(t, &alex, "/api/v1/people", `{"handle":"sam"}`, "k")
			now := h.clock.Advance(tt.advance)
			w := h.post(t, &alex, "/api/v1/people", tt.body, "k")
			if got := h.handler.runs.Load(); got != tt.runs {
				t.Fatalf("runs = %d, want %d", got, tt.runs)
			}
			if tt.runs == 1 {
				return
			}
			if w.Code != http.StatusCreated || w.Header().Get("Idempotency-Replayed") != "" {
				t.Fatalf("after expiry = %d %v, want a fresh 201", w.Code, w.Header())
			}
			rec, _ := h.store.row(alex, "k")
			if !rec.CreatedAt.Equal(now) || rec.Response.Location != "/api/v1/people/2" {
				t.Fatalf("record after expiry = %+v, want the new run's at %v", rec, now)
			}
			if again := h.post(t, &alex, "/api/v1/people", tt.body, "k"); again.Header().Get("Location") != "/api/v1/people/2" {
				t.Fatalf("replay after the rerun = %v, want the new run's", again.Header())
			}
		})
	}
}

func TestIdempotencyConcurrentDuplicatesRunOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(w http.ResponseWriter, r *http.Request, body []byte, run int64) {
		time.Sleep(5 * time.Millisecond) // let the duplicates pile up behind the claim
		created(w, r, body, run)
	})
	const n = 8
	responses := make([]*httptest.ResponseRecorder, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { responses[i] = h.post(t, &alex, "/api/v1/people", `{"handle":"sam"}`, "k") })
	}
	wg.Wait()
	if got := h.handler.runs.Load(); got != 1 {
		t.Fatalf("handler ran %d times, want once", got)
	}
	replayed := 0
	for _, w := range responses {
		if w.Code != http.StatusCreated || !bytes.Equal(w.Body.Bytes(), responses[0].Body.Bytes()) {
			t.Fatalf("response %d %s differs from %d %s", w.Code, w.Body, responses[0].Code, responses[0].Body)
		}
		if w.Header().Get("Idempotency-Replayed") == "true" {
			replayed++
		}
	}
	if replayed != n-1 {
		t.Fatalf("%d replays, want %d", replayed, n-1)
	}
}

func TestIdempotencyCommitFailureWritesNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"commit", errors.New("connection reset"), http.StatusInternalServerError, "internal"},
		{"commit-phase hook with a kind", problem.New(problem.ErrRateLimited, "Too many writes."), http.StatusTooManyRequests, "too_many_requests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, created)
			h.store.set(func(s *fakeStore) { s.failCommit = tt.err })
			w := h.post(t, &alex, "/api/v1/people", `{}`, "k")
			assertProblem(t, w, tt.status, tt.code)
			if w.Header().Get("Location") != "" || w.Header().Get("X-Run") != "" {
				t.Fatalf("the uncommitted response leaked headers: %v", w.Header())
			}
			if _, ok := h.store.row(alex, "k"); ok {
				t.Fatal("a failed commit left the key")
			}
		})
	}
}

func TestIdempotencyStoreFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		prime bool // store a response under the key first
		fail  func(s *fakeStore)
		runs  int64
	}{
		{"claim", false, func(s *fakeStore) { s.failClaim = errStore }, 0},
		{"load", true, func(s *fakeStore) { s.failLoad = errStore }, 1},
		{"save", false, func(s *fakeStore) { s.failSave = errStore }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, created)
			if tt.prime {
				h.post(t, &alex, "/api/v1/people", `{}`, "k")
			}
			h.store.set(tt.fail)
			w := h.post(t, &alex, "/api/v1/people", `{}`, "k")
			assertProblem(t, w, http.StatusInternalServerError, "internal")
			if got := h.handler.runs.Load(); got != tt.runs {
				t.Fatalf("runs = %d, want %d", got, tt.runs)
			}
			if d := assertProblem(t, w, http.StatusInternalServerError, "internal")["detail"]; d != problem.InternalDetail {
				t.Fatalf("detail = %v, want the internal detail only", d)
			}
		})
	}
}

func TestIdempotencyReclaimFailure(t *testing.T) {
	t.Parallel()
	h := newHarness(t, created)
	h.post(t, &alex, "/api/v1/people", `{}`, "k")
	h.clock.Advance(ttl)
	h.store.set(func(s *fakeStore) { s.failReclaim = errStore })
	assertProblem(t, h.post(t, &alex, "/api/v1/people", `{}`, "k"), http.StatusInternalServerError, "internal")
	if h.handler.runs.Load() != 1 {
		t.Fatal("the handler ran although the expired key could not be reclaimed")
	}
	if rec, _ := h.store.row(alex, "k"); !rec.CreatedAt.Equal(epoch) {
		t.Fatal("the old record was not kept")
	}
}

func TestIdempotencyKeyGoneBetweenClaimAndLoad(t *testing.T) {
	t.Parallel()
	h := newHarness(t, created)
	h.post(t, &alex, "/api/v1/people", `{}`, "k")
	h.store.set(func(s *fakeStore) { s.vanish = true })
	w := h.post(t, &alex, "/api/v1/people", `{}`, "k")
	if w.Code != http.StatusCreated || w.Header().Get("Idempotency-Replayed") != "" || h.handler.runs.Load() != 2 {
		t.Fatalf("after the key vanished: %d %v, runs %d; want a fresh run", w.Code, w.Header(), h.handler.runs.Load())
	}
	want := []string{"claim", "save", "claim", "load", "claim", "save"}
	if got := h.store.callLog(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("store calls = %v, want %v", got, want)
	}
}

// vanishingStore finds no row on every Load, as under a purge that never ends.
type vanishingStore struct{ *fakeStore }

func (vanishingStore) Load(context.Context, uuid.UUID, string) (httpmw.IdempotencyRecord, bool, error) {
	return httpmw.IdempotencyRecord{}, false, nil
}

func TestIdempotencyGivesUpWhenTheKeyKeepsVanishing(t *testing.T) {
	t.Parallel()
	store := newFakeStore()
	store.rows[slot{alex.PrincipalID, "k"}] = httpmw.IdempotencyRecord{CreatedAt: epoch}
	runs := 0
	mw := httpmw.Idempotency(vanishingStore{store}, store, ttl, claimAttempts, clock.NewFake(epoch))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { runs++ }))
	r := quietNew(t, http.MethodPost, "/api/v1/people", strings.NewReader(`{}`))
	r = r.WithContext(actor.With(r.Context(), alex))
	r.Header.Set("Idempotency-Key", "k")
	w := httptest.NewRecorder()
	mw.ServeHTTP(w, r)
	assertProblem(t, w, http.StatusInternalServerError, "internal")
	if runs != 0 {
		t.Fatal("the handler ran without a claimed key")
	}
}

// TestIdempotencyClaimsAsOftenAsConfigured: a key that keeps vanishing is claimed exactly
// http.idempotency_claim_attempts times before the request fails.
func TestIdempotencyClaimsAsOftenAsConfigured(t *testing.T) {
	t.Parallel()
	for _, attempts := range []int{1, 5} {
		store := newFakeStore()
		store.rows[slot{alex.PrincipalID, "k"}] = httpmw.IdempotencyRecord{CreatedAt: epoch}
		mw := httpmw.Idempotency(vanishingStore{store}, store, ttl, attempts, clock.NewFake(epoch))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		r := quietNew(t, http.MethodPost, "/api/v1/people", strings.NewReader(`{}`))
		r = r.WithContext(actor.With(r.Context(), alex))
		r.Header.Set("Idempotency-Key", "k")
		w := httptest.NewRecorder()
		mw.ServeHTTP(w, r)
		assertProblem(t, w, http.StatusInternalServerError, "internal")
		claims := 0
		for _, call := range store.callLog() {
			if call == "claim" {
				claims++
			}
		}
		if claims != attempts {
			t.Errorf("attempts %d: %d claims (calls %v), want %d", attempts, claims, store.callLog(), attempts)
		}
	}
}

func TestIdempotencyRecordWithoutResponseRunsAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t, created)
	// A committed claim without a response cannot happen through the middleware; a row
	// written by hand must not be replayed as an empty answer.
	h.store.rows[slot{alex.PrincipalID, "k"}] = httpmw.IdempotencyRecord{Fingerprint: []byte("other"), CreatedAt: epoch}
	w := h.post(t, &alex, "/api/v1/people", `{}`, "k")
	if w.Code != http.StatusCreated || h.handler.runs.Load() != 1 {
		t.Fatalf("= %d, runs %d; want a fresh run", w.Code, h.handler.runs.Load())
	}
}

func TestIdempotencyForgetsResponsesMarkedNoStore(t *testing.T) {
	t.Parallel()
	tests := []string{"no-store", "private, No-Store", "no-cache,no-store"}
	for _, cc := range tests {
		t.Run(cc, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, func(w http.ResponseWriter, _ *http.Request, _ []byte, run int64) {
				w.Header().Set("Cache-Control", cc)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusCreated)
				_, _ = fmt.Fprintf(w, `{"token":"secret-%d"}`, run)
			})
			first := h.post(t, &alex, "/api/v1/principals/x/tokens", `{}`, "k")
			if first.Code != http.StatusCreated || first.Body.String() != `{"token":"secret-1"}` || first.Header().Get("Cache-Control") != cc {
				t.Fatalf("first = %d %s %v", first.Code, first.Body, first.Header())
			}
			if _, ok := h.store.row(alex, "k"); ok {
				t.Fatal("a no-store response was kept")
			}
			second := h.post(t, &alex, "/api/v1/principals/x/tokens", `{}`, "k")
			if second.Body.String() != `{"token":"secret-2"}` || second.Header().Get("Idempotency-Replayed") != "" {
				t.Fatalf("retry = %s %v, want a fresh run", second.Body, second.Header())
			}
		})
	}
	t.Run("release fails", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, func(w http.ResponseWriter, _ *http.Request, _ []byte, _ int64) {
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusCreated)
		})
		h.store.set(func(s *fakeStore) { s.failRelease = errStore })
		assertProblem(t, h.post(t, &alex, "/api/v1/principals/x/tokens", `{}`, "k"), http.StatusInternalServerError, "internal")
	})
	t.Run("other cache directives are kept", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, func(w http.ResponseWriter, r *http.Request, body []byte, run int64) {
			w.Header().Set("Cache-Control", "no-cache, max-age=0, x-no-store-please")
			created(w, r, body, run)
		})
		h.post(t, &alex, "/api/v1/people", `{}`, "k")
		if _, ok := h.store.row(alex, "k"); !ok {
			t.Fatal("a cacheable response was not kept")
		}
	})
}

func TestIdempotencyBodyTooLarge(t *testing.T) {
	t.Parallel()
	h := newHarness(t, created)
	mw := httpmw.BodyLimit(4)(h.mw)
	r := quietNew(t, http.MethodPost, "/api/v1/people", strings.NewReader(`{"handle":"sam"}`))
	r.ContentLength = -1
	r = r.WithContext(actor.With(r.Context(), alex))
	r.Header.Set("Idempotency-Key", "k")
	w := httptest.NewRecorder()
	mw.ServeHTTP(w, r)
	assertProblem(t, w, http.StatusRequestEntityTooLarge, "payload_too_large")
	if h.handler.runs.Load() != 0 || len(h.store.callLog()) != 0 {
		t.Fatal("an oversized body reached the handler or the store")
	}
}

func TestIdempotencyPanicRollsBack(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(http.ResponseWriter, *http.Request, []byte, int64) { panic("handler bug") })
	w := httptest.NewRecorder()
	r := quietNew(t, http.MethodPost, "/api/v1/people", strings.NewReader(`{}`))
	r = r.WithContext(actor.With(r.Context(), alex))
	r.Header.Set("Idempotency-Key", "k")
	httpmw.Recover(h.mw).ServeHTTP(w, r)
	assertProblem(t, w, http.StatusInternalServerError, "internal")
	if _, ok := h.store.row(alex, "k"); ok {
		t.Fatal("a panic left the key claimed")
	}
}

func TestIdempotencyMisuse(t *testing.T) {
	t.Parallel()
	store := newFakeStore()
	tests := []struct {
		name string
		f    func()
	}{
		{"nil store", func() { httpmw.Idempotency(nil, store, ttl, claimAttempts, nil) }},
		{"nil runner", func() { httpmw.Idempotency(store, nil, ttl, claimAttempts, nil) }},
		{"zero ttl", func() { httpmw.Idempotency(store, store, 0, claimAttempts, nil) }},
		{"negative ttl", func() { httpmw.Idempotency(store, store, -time.Second, claimAttempts, nil) }},
		{"no claim attempt", func() { httpmw.Idempotency(store, store, ttl, 0, nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if catch(tt.f) == nil {
				t.Fatal("no panic")
			}
		})
	}
}
