-- One consumer of a principal.
SELECT principal_id, name, acked_seq, sync_epoch, created_at, updated_at
FROM sync.consumers
WHERE principal_id = $1 AND name = $2
