-- Forgets key $2 of actor $1 (a response that must not be stored).
DELETE FROM instance.idempotency_keys
WHERE actor_id = $1 AND key = $2
