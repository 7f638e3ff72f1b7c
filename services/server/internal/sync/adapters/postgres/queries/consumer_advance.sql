-- Moves a consumer's acked_seq forward, never back, under the row's lock; updated_at moves only
-- with it. Returns the row as it is after the statement.
UPDATE sync.consumers
SET acked_seq = GREATEST(acked_seq, $3),
    updated_at = CASE WHEN $3 > acked_seq THEN $4 ELSE updated_at END
WHERE principal_id = $1 AND name = $2
RETURNING principal_id, name, acked_seq, sync_epoch, created_at, updated_at
