-- Claims key $2 for actor $1 with fingerprint $3 at $4, with no response yet, unless the actor
-- already has the key: returns a row only when it inserted one. A concurrent uncommitted claim
-- of the same key makes this statement wait for its transaction to end (the primary key).
INSERT INTO instance.idempotency_keys (actor_id, key, fingerprint, created_at)
VALUES ($1, $2, $3, $4)
ON CONFLICT (actor_id, key) DO NOTHING
RETURNING true
