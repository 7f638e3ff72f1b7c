-- The record of key $2 of actor $1, its row locked until the transaction ends, so that only one
-- transaction at a time can decide to reclaim an expired key.
SELECT fingerprint, created_at, status, content_type, location, body
FROM instance.idempotency_keys
WHERE actor_id = $1 AND key = $2
FOR UPDATE
