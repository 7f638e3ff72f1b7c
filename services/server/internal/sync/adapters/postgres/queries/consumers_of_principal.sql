-- Every consumer of a principal, by name.
SELECT principal_id, name, acked_seq, sync_epoch, created_at, updated_at
FROM sync.consumers
WHERE principal_id = $1
ORDER BY name
