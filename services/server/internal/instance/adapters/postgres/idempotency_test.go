package postgres_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/kernel/httpmw"
)

var (
	alexID  = uuid.MustParse("0190a6b2-7c1e-7d3a-9f00-00000000a1e5")
	samID   = uuid.MustParse("0190a6b2-7c1e-7d3a-9f00-0000000005a3")
	claimed = time.Date(2025, 1, 2, 3, 4, 5, 123456000, time.UTC)
)

var _ httpmw.IdempotencyStore = (*instancepg.IdempotencyKeys)(nil)

func fp(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}

var created = httpmw.StoredResponse{
	Status:      201,
	ContentType: "application/json",
	Location:    "/api/v1/people/0190a6b2-7c1e-7d3a-9f00-0000000005a3",
	Body:        []byte(`{"handle":"sam"}`),
}

// keysEnv is an instance store environment with the idempotency keys store.
type keysEnv struct {
	env
	keys *instancepg.IdempotencyKeys
}

func setupKeys(t *testing.T) keysEnv {
	t.Helper()
	e := setup(t)
	return keysEnv{env: e, keys: instancepg.NewIdempotencyKeys(e.runner)}
}

// inTx runs fn in a committed transaction and fails the test on an error.
func (e keysEnv) inTx(t *testing.T, fn func(ctx context.Context) error) {
	t.Helper()
	if err := e.runner.RunInTx(t.Context(), fn); err != nil {
		t.Fatalf("transaction: %v", err)
	}
}

// claimAndSave commits a claim of key for actorID with resp stored.
func (e keysEnv) claimAndSave(t *testing.T, actorID uuid.UUID, key string, at time.Time, resp httpmw.StoredResponse) {
	t.Helper()
	e.inTx(t, func(ctx context.Context) error {
		ok, err := e.keys.Claim(ctx, actorID, key, fp("first"), at)
		if err != nil || !ok {
			t.Fatalf("Claim = %v, %v; want a new claim", ok, err)
		}
		return e.keys.Save(ctx, actorID, key, resp)
	})
}

func (e keysEnv) load(t *testing.T, actorID uuid.UUID, key string) (httpmw.IdempotencyRecord, bool) {
	t.Helper()
	var (
		rec   httpmw.IdempotencyRecord
		found bool
	)
	e.inTx(t, func(ctx context.Context) error {
		var err error
		rec, found, err = e.keys.Load(ctx, actorID, key)
		return err
	})
	return rec, found
}

func (e keysEnv) count(t *testing.T) int {
	t.Helper()
	var n int
	if err := e.pool.QueryRow(t.Context(), "SELECT count(*) FROM instance.idempotency_keys").Scan(&n); err != nil {
		t.Fatalf("count keys: %v", err)
	}
	return n
}

// waitForLockWaiters waits until n other backends of the test's database wait for a lock.
func (e keysEnv) waitForLockWaiters(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		var waiting int
		err := e.pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_catalog.pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_catalog.pg_backend_pid()`).Scan(&waiting)
		if err != nil {
			t.Fatalf("pg_stat_activity: %v", err)
		}
		if waiting >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d backends wait for a lock after %v, want %d", waiting, waitTimeout, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestIdempotencyKeysClaimSaveLoad(t *testing.T) {
	t.Parallel()
	e := setupKeys(t)
	if _, found := e.load(t, alexID, "retry-alex-1"); found {
		t.Fatal("Load found a key never claimed")
	}
	e.claimAndSave(t, alexID, "retry-alex-1", claimed, created)
	rec, found := e.load(t, alexID, "retry-alex-1")
	if !found || !bytes.Equal(rec.Fingerprint, fp("first")) || !rec.CreatedAt.Equal(claimed) || rec.CreatedAt.Location() != time.UTC {
		t.Fatalf("Load = %+v, %v", rec, found)
	}
	if r := rec.Response; r.Status != created.Status || r.ContentType != created.ContentType ||
		r.Location != created.Location || !bytes.Equal(r.Body, created.Body) {
		t.Fatalf("response = %+v, want %+v", r, created)
	}

	e.inTx(t, func(ctx context.Context) error {
		ok, err := e.keys.Claim(ctx, alexID, "retry-alex-1", fp("second"), claimed.Add(time.Hour))
		if err != nil || ok {
			t.Fatalf("second Claim = %v, %v; want false", ok, err)
		}
		ok, err = e.keys.Claim(ctx, samID, "retry-alex-1", fp("second"), claimed)
		if err != nil || !ok {
			t.Fatalf("Claim of the same key by Sam = %v, %v; want true", ok, err)
		}
		return nil
	})
	if rec, _ := e.load(t, alexID, "retry-alex-1"); !bytes.Equal(rec.Fingerprint, fp("first")) {
		t.Fatal("a failed claim changed the record")
	}
	if rec, found := e.load(t, samID, "retry-alex-1"); !found || rec.Response.Status != 0 || rec.Response.Body == nil || len(rec.Response.Body) != 0 {
		t.Fatalf("Sam's claim = %+v, %v; want no response yet", rec, found)
	}
}

func TestIdempotencyKeysEmptyResponse(t *testing.T) {
	t.Parallel()
	e := setupKeys(t)
	e.claimAndSave(t, alexID, "k", claimed, httpmw.StoredResponse{Status: 204})
	rec, _ := e.load(t, alexID, "k")
	if rec.Response.Status != 204 || rec.Response.ContentType != "" || rec.Response.Location != "" || len(rec.Response.Body) != 0 {
		t.Fatalf("response = %+v", rec.Response)
	}
}

func TestIdempotencyKeysReclaimAndRelease(t *testing.T) {
	t.Parallel()
	e := setupKeys(t)
	e.claimAndSave(t, alexID, "k", claimed, created)
	later := claimed.Add(48 * time.Hour)
	e.inTx(t, func(ctx context.Context) error {
		if _, _, err := e.keys.Load(ctx, alexID, "k"); err != nil {
			return err
		}
		return e.keys.Reclaim(ctx, alexID, "k", fp("second"), later)
	})
	rec, _ := e.load(t, alexID, "k")
	if !bytes.Equal(rec.Fingerprint, fp("second")) || !rec.CreatedAt.Equal(later) || rec.Response.Status != 0 ||
		len(rec.Response.Body) != 0 || rec.Response.ContentType != "" || rec.Response.Location != "" {
		t.Fatalf("after Reclaim = %+v", rec)
	}
	e.inTx(t, func(ctx context.Context) error { return e.keys.Release(ctx, alexID, "k") })
	if _, found := e.load(t, alexID, "k"); found {
		t.Fatal("Release kept the key")
	}
}

func TestIdempotencyKeysRefuseUnclaimedKeys(t *testing.T) {
	t.Parallel()
	e := setupKeys(t)
	calls := map[string]func(ctx context.Context) error{
		"Save":    func(ctx context.Context) error { return e.keys.Save(ctx, alexID, "k", created) },
		"Reclaim": func(ctx context.Context) error { return e.keys.Reclaim(ctx, alexID, "k", fp("x"), claimed) },
		"Release": func(ctx context.Context) error { return e.keys.Release(ctx, alexID, "k") },
	}
	for name, call := range calls {
		if err := call(t.Context()); !errors.Is(err, instancepg.ErrKeyNotClaimed) {
			t.Errorf("%s of a missing key = %v, want ErrKeyNotClaimed", name, err)
		}
	}
}

func TestIdempotencyKeysRolledBackClaimLeavesNothing(t *testing.T) {
	t.Parallel()
	e := setupKeys(t)
	err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
		if _, err := e.keys.Claim(ctx, alexID, "k", fp("first"), claimed); err != nil {
			return err
		}
		if err := e.keys.Save(ctx, alexID, "k", created); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) || e.count(t) != 0 {
		t.Fatalf("RunInTx = %v, %d keys; want errBoom and none", err, e.count(t))
	}
}

// TestIdempotencyKeysConcurrentClaimWaits holds an uncommitted claim and lets a second
// transaction claim the same key: it waits on the unique index, and the first transaction's
// outcome decides what it finds.
func TestIdempotencyKeysConcurrentClaimWaits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		end         func(ctx context.Context, e keysEnv) error // the first transaction's last step
		wantClaimed bool
	}{
		{"first commits its response", func(ctx context.Context, e keysEnv) error {
			return e.keys.Save(ctx, alexID, "k", created)
		}, false},
		{"first rolls back", func(context.Context, keysEnv) error { return errBoom }, true},
		{"first releases the key", func(ctx context.Context, e keysEnv) error {
			return e.keys.Release(ctx, alexID, "k")
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := keysEnv{env: setupPool(t, 4)}
			e.keys = instancepg.NewIdempotencyKeys(e.runner)
			release := make(chan struct{})
			first := make(chan error, 1)
			claimedFirst := make(chan struct{})
			go func() {
				first <- e.runner.RunInTx(context.WithoutCancel(t.Context()), func(ctx context.Context) error {
					if ok, err := e.keys.Claim(ctx, alexID, "k", fp("first"), claimed); err != nil || !ok {
						return errors.Join(errors.New("first claim failed"), err)
					}
					close(claimedFirst)
					<-release
					return tt.end(ctx, e)
				})
			}()
			<-claimedFirst
			type result struct {
				claimed bool
				rec     httpmw.IdempotencyRecord
				found   bool
				err     error
			}
			second := make(chan result, 1)
			go func() {
				var r result
				r.err = e.runner.RunInTx(context.WithoutCancel(t.Context()), func(ctx context.Context) error {
					var err error
					if r.claimed, err = e.keys.Claim(ctx, alexID, "k", fp("second"), claimed); err != nil || r.claimed {
						return err
					}
					r.rec, r.found, err = e.keys.Load(ctx, alexID, "k")
					return err
				})
				second <- r
			}()
			e.waitForLockWaiters(t, 1)
			select {
			case r := <-second:
				t.Fatalf("the second claim returned %+v while the first was open", r)
			default:
			}
			close(release)
			if err := <-first; err != nil && !errors.Is(err, errBoom) {
				t.Fatalf("first transaction: %v", err)
			}
			var r result
			select {
			case r = <-second:
			case <-time.After(waitTimeout):
				t.Fatal("the second claim never returned")
			}
			if r.err != nil || r.claimed != tt.wantClaimed {
				t.Fatalf("second Claim = %v, %v; want %v", r.claimed, r.err, tt.wantClaimed)
			}
			if !tt.wantClaimed && (!r.found || r.rec.Response.Status != created.Status || !bytes.Equal(r.rec.Fingerprint, fp("first"))) {
				t.Fatalf("second Load = %+v, %v; want the first's response", r.rec, r.found)
			}
		})
	}
}

// TestIdempotencyKeysLoadLocks has two transactions load an expired key: the second waits for
// the first, which reclaims it, and then reads the first's new record.
func TestIdempotencyKeysLoadLocks(t *testing.T) {
	t.Parallel()
	e := keysEnv{env: setupPool(t, 4)}
	e.keys = instancepg.NewIdempotencyKeys(e.runner)
	e.claimAndSave(t, alexID, "k", claimed, created)
	later := claimed.Add(48 * time.Hour)
	locked := make(chan struct{})
	release := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- e.runner.RunInTx(context.WithoutCancel(t.Context()), func(ctx context.Context) error {
			if _, _, err := e.keys.Load(ctx, alexID, "k"); err != nil {
				return err
			}
			close(locked)
			<-release
			if err := e.keys.Reclaim(ctx, alexID, "k", fp("second"), later); err != nil {
				return err
			}
			return e.keys.Save(ctx, alexID, "k", httpmw.StoredResponse{Status: 200, Body: []byte("again")})
		})
	}()
	<-locked
	second := make(chan httpmw.IdempotencyRecord, 1)
	go func() {
		var rec httpmw.IdempotencyRecord
		_ = e.runner.RunInTx(context.WithoutCancel(t.Context()), func(ctx context.Context) error {
			var err error
			rec, _, err = e.keys.Load(ctx, alexID, "k")
			return err
		})
		second <- rec
	}()
	e.waitForLockWaiters(t, 1)
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("first transaction: %v", err)
	}
	select {
	case rec := <-second:
		if !rec.CreatedAt.Equal(later) || string(rec.Response.Body) != "again" {
			t.Fatalf("second Load = %+v, want the reclaimed record", rec)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the second Load never returned")
	}
}

func TestIdempotencyKeysPurgeExpired(t *testing.T) {
	t.Parallel()
	e := setupKeys(t)
	e.claimAndSave(t, alexID, "old", claimed, created)
	e.claimAndSave(t, samID, "old", claimed.Add(time.Microsecond), created)
	e.claimAndSave(t, alexID, "new", claimed.Add(time.Hour), created)
	if n, err := e.keys.PurgeExpired(t.Context(), claimed.Add(-time.Microsecond)); err != nil || n != 0 {
		t.Fatalf("PurgeExpired before every key = %d, %v; want 0", n, err)
	}
	if n, err := e.keys.PurgeExpired(t.Context(), claimed); err != nil || n != 1 {
		t.Fatalf("PurgeExpired at the oldest = %d, %v; want 1", n, err)
	}
	if _, found := e.load(t, alexID, "old"); found {
		t.Fatal("a key claimed exactly at the cut-off survived")
	}
	if n, err := e.keys.PurgeExpired(t.Context(), claimed.Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("second PurgeExpired = %d, %v; want 1", n, err)
	}
	if _, found := e.load(t, alexID, "new"); !found || e.count(t) != 1 {
		t.Fatal("PurgeExpired removed a live key")
	}
}

func TestIdempotencyKeysTableChecks(t *testing.T) {
	t.Parallel()
	e := setupKeys(t)
	tests := []struct {
		name   string
		key    string
		fp     []byte
		status int
	}{
		{"empty key", "", fp("x"), 201},
		{"key with space", "retry alex", fp("x"), 201},
		{"key not ascii", "r\u00e9essai", fp("x"), 201},
		{"key too long", strings.Repeat("k", 256), fp("x"), 201},
		{"short fingerprint", "k", []byte("short"), 201},
		{"status 500", "k", fp("x"), 500},
		{"status 199", "k", fp("x"), 199},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.pool.Exec(t.Context(), `INSERT INTO instance.idempotency_keys (actor_id, key, fingerprint, status, created_at)
				VALUES ($1, $2, $3, $4, now())`, alexID, tt.key, tt.fp, tt.status)
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "23514" {
				t.Fatalf("insert = %v, want a check violation", err)
			}
		})
	}
	var all strings.Builder
	for c := byte(0x21); c <= 0x7e; c++ {
		all.WriteByte(c)
	}
	for _, key := range []string{all.String(), strings.Repeat("k", 255)} {
		e.inTx(t, func(ctx context.Context) error {
			_, err := e.keys.Claim(ctx, alexID, key, fp("x"), claimed)
			return err
		})
	}
}

func TestIdempotencyKeysDatabaseErrorsAreWrapped(t *testing.T) {
	t.Parallel()
	e := setupKeys(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	calls := map[string]func() error{
		"Claim": func() error { _, err := e.keys.Claim(ctx, alexID, "k", fp("x"), claimed); return err },
		"Load":  func() error { _, _, err := e.keys.Load(ctx, alexID, "k"); return err },
		"Reclaim": func() error {
			return e.keys.Reclaim(ctx, alexID, "k", fp("x"), claimed)
		},
		"Save":         func() error { return e.keys.Save(ctx, alexID, "k", created) },
		"Release":      func() error { return e.keys.Release(ctx, alexID, "k") },
		"PurgeExpired": func() error { _, err := e.keys.PurgeExpired(ctx, claimed); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s on a cancelled context = %v, want context.Canceled", name, err)
		}
	}
}
