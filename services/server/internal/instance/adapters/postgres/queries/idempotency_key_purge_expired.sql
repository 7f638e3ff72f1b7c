-- Deletes every key claimed at or before $1 (now minus http.idempotency_ttl): those are expired
-- and would be claimed anew anyway.
DELETE FROM instance.idempotency_keys
WHERE created_at <= $1
