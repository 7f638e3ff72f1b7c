-- Claims anew key $2 of actor $1 (expired, or left without a response): fingerprint $3, claimed
-- at $4, the stored response cleared.
UPDATE instance.idempotency_keys
SET fingerprint = $3, created_at = $4, status = 0, content_type = '', location = '', body = ''
WHERE actor_id = $1 AND key = $2
