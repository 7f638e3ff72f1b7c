package postgres

import (
	"context"
	_ "embed" // the SQL of queries/
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/kernel/httpmw"
	"bothy.example.com/server/internal/kernel/tx"
)

var (
	//go:embed queries/idempotency_key_claim.sql
	idempotencyKeyClaim string
	//go:embed queries/idempotency_key_load.sql
	idempotencyKeyLoad string
	//go:embed queries/idempotency_key_reclaim.sql
	idempotencyKeyReclaim string
	//go:embed queries/idempotency_key_save.sql
	idempotencyKeySave string
	//go:embed queries/idempotency_key_release.sql
	idempotencyKeyRelease string
	//go:embed queries/idempotency_key_purge_expired.sql
	idempotencyKeyPurgeExpired string
)

// ErrKeyNotClaimed is returned by Save, Reclaim and Release for a key the actor does not hold:
// the middleware calls them only for a key its transaction claimed or locked, so this is a
// bug, never a client error.
var ErrKeyNotClaimed = errors.New("instance: idempotency key not claimed")

// IdempotencyKeys stores the keys of the HTTP edge's Idempotency middleware in
// instance.idempotency_keys (ADR 0013): it implements httpmw.IdempotencyStore, and
// PurgeExpired for the maintenance. Every statement runs on the transaction of the context
// (tx.Runner.DB), which the middleware opens around the handler.
type IdempotencyKeys struct {
	runner *tx.Runner
}

var _ httpmw.IdempotencyStore = (*IdempotencyKeys)(nil)

// NewIdempotencyKeys returns the store on runner's transaction of the context, or its pool.
func NewIdempotencyKeys(runner *tx.Runner) *IdempotencyKeys {
	return &IdempotencyKeys{runner: runner}
}

// Claim implements httpmw.IdempotencyStore.
func (k *IdempotencyKeys) Claim(ctx context.Context, actorID uuid.UUID, key string, fingerprint []byte, at time.Time) (bool, error) {
	var inserted bool
	err := k.runner.DB(ctx).QueryRow(ctx, idempotencyKeyClaim, actorID, key, fingerprint, at).Scan(&inserted)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("instance: claim idempotency key: %w", err)
	}
	return inserted, nil
}

// Load implements httpmw.IdempotencyStore.
func (k *IdempotencyKeys) Load(ctx context.Context, actorID uuid.UUID, key string) (httpmw.IdempotencyRecord, bool, error) {
	var rec httpmw.IdempotencyRecord
	r := &rec.Response
	err := k.runner.DB(ctx).QueryRow(ctx, idempotencyKeyLoad, actorID, key).
		Scan(&rec.Fingerprint, &rec.CreatedAt, &r.Status, &r.ContentType, &r.Location, &r.Body)
	if errors.Is(err, pgx.ErrNoRows) {
		return httpmw.IdempotencyRecord{}, false, nil
	}
	if err != nil {
		return httpmw.IdempotencyRecord{}, false, fmt.Errorf("instance: load idempotency key: %w", err)
	}
	rec.CreatedAt = rec.CreatedAt.UTC()
	return rec, true, nil
}

// Reclaim implements httpmw.IdempotencyStore; ErrKeyNotClaimed when the actor has no such key.
func (k *IdempotencyKeys) Reclaim(ctx context.Context, actorID uuid.UUID, key string, fingerprint []byte, at time.Time) error {
	return k.change(ctx, "reclaim", idempotencyKeyReclaim, actorID, key, fingerprint, at)
}

// Save implements httpmw.IdempotencyStore; ErrKeyNotClaimed when the actor has no such key.
func (k *IdempotencyKeys) Save(ctx context.Context, actorID uuid.UUID, key string, resp httpmw.StoredResponse) error {
	body := resp.Body
	if body == nil {
		body = []byte{} // the column is NOT NULL
	}
	return k.change(ctx, "save", idempotencyKeySave, actorID, key, resp.Status, resp.ContentType, resp.Location, body)
}

// Release implements httpmw.IdempotencyStore; ErrKeyNotClaimed when the actor has no such key.
func (k *IdempotencyKeys) Release(ctx context.Context, actorID uuid.UUID, key string) error {
	return k.change(ctx, "release", idempotencyKeyRelease, actorID, key)
}

// change runs a statement on one key's row and reports a missing row as ErrKeyNotClaimed.
func (k *IdempotencyKeys) change(ctx context.Context, what, sql string, actorID uuid.UUID, key string, args ...any) error {
	tag, err := k.runner.DB(ctx).Exec(ctx, sql, append([]any{actorID, key}, args...)...)
	if err != nil {
		return fmt.Errorf("instance: %s idempotency key: %w", what, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("instance: %s idempotency key: %w", what, ErrKeyNotClaimed)
	}
	return nil
}

// PurgeExpired deletes every key claimed at or before before (the caller passes now minus
// http.idempotency_ttl) and returns how many it deleted. A key reclaimed concurrently is kept:
// the DELETE waits for the reclaiming transaction and then sees the new claim time. The
// maintenance role and bothy maintain run it.
func (k *IdempotencyKeys) PurgeExpired(ctx context.Context, before time.Time) (int64, error) {
	tag, err := k.runner.DB(ctx).Exec(ctx, idempotencyKeyPurgeExpired, before)
	if err != nil {
		return 0, fmt.Errorf("instance: purge expired idempotency keys: %w", err)
	}
	return tag.RowsAffected(), nil
}
