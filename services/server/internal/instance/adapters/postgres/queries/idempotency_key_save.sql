-- Stores the response (status $3, content type $4, location $5, body $6) of key $2 of actor $1.
UPDATE instance.idempotency_keys
SET status = $3, content_type = $4, location = $5, body = $6
WHERE actor_id = $1 AND key = $2
