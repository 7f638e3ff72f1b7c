package wire

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	identitypg "bothy.example.com/server/internal/identity/adapters/postgres"
	identitydomain "bothy.example.com/server/internal/identity/domain"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/pgtest"
)

// batchCounter is a pgx batch tracer that counts the batches sent: each is one round trip.
type batchCounter struct{ n atomic.Int64 }

func (c *batchCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (*batchCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (*batchCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (*batchCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (*batchCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestSnapshotStateFromTheAuthentication: a getSnapshot or ackEvents request's authentication
// reads the head, the epoch and the permission version with the token, in its one round trip,
// and the snapshot's State (the consumers' AckState) takes them from there without a round
// trip of its own; any other
// operation's authentication reads the version alone, and the State reads its three itself.
// What the authentication read is what the State would read.
func TestSnapshotStateFromTheAuthentication(t *testing.T) {
	t.Parallel()
	cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	counter := &batchCounter{}
	cfg.ConnConfig.Tracer = counter
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	runner := tx.NewRunner(pool)
	inst := instancepg.New(runner)
	if _, err := inst.Ensure(t.Context(), "Example"); err != nil {
		t.Fatal(err)
	}
	creds := credentialStore{Store: identitypg.New(runner), runner: runner, instance: inst}
	state := snapshotState{runner: runner, instance: inst}
	want, err := state.SnapshotState(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		method, pattern string
		head            bool
	}{
		{http.MethodGet, "/api/v1/sync/snapshot", true},
		{http.MethodHead, "/api/v1/sync/snapshot", true},
		{http.MethodPost, "/api/v1/consumers/{name}/ack", true},
		{http.MethodGet, "/api/v1/consumers/{name}/events", false},
		{http.MethodGet, "/api/v1/events", false},
		{http.MethodPut, "/api/v1/sync/snapshot", false},
	} {
		t.Run(tc.method+" "+tc.pattern, func(t *testing.T) {
			var ctx context.Context
			mw := withVersionRead(func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					// The identity module's authentication reads the token through the store.
					if _, err := creds.Credential(r.Context(), identitydomain.TokenHash{}); err == nil {
						t.Error("a token of zeroes authenticated")
					}
					next.ServeHTTP(w, r)
				})
			})
			h := mw(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { ctx = r.Context() }))
			r := httptest.NewRequestWithContext(t.Context(), tc.method, tc.pattern, nil)
			rctx := chi.NewRouteContext()
			rctx.RoutePatterns = []string{tc.pattern}
			r = r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, rctx))
			before := counter.n.Load()
			h.ServeHTTP(httptest.NewRecorder(), r)
			if n := counter.n.Load() - before; n != 1 {
				t.Fatalf("the authentication sent %d batches, want 1", n)
			}
			head, ok := readHead(ctx)
			if ok != tc.head {
				t.Fatalf("the authentication read the head: %v, want %v", ok, tc.head)
			}
			before = counter.n.Load()
			got, err := state.SnapshotState(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sent := counter.n.Load() - before
			switch {
			case tc.head && (sent != 0 || got != head):
				t.Fatalf("the State sent %d batches and gave %+v, want none and the authentication's %+v", sent, got, head)
			case !tc.head && sent != 1:
				t.Fatalf("the State sent %d batches, want its own one", sent)
			}
			if got != want {
				t.Fatalf("State %+v, want %+v (nothing changed in between)", got, want)
			}
		})
	}
}
