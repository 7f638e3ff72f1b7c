-- Stores a new consumer; one of the same name wins (nothing is returned then).
INSERT INTO sync.consumers (principal_id, name, acked_seq, sync_epoch, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $5)
ON CONFLICT (principal_id, name) DO NOTHING
RETURNING principal_id, name, acked_seq, sync_epoch, created_at, updated_at
