-- The consumer case: rewinds the agent's ($1) consumer ($2) to the seq ($3) a stretch of its
-- catch-up starts after (an ack never moves a consumer back; this is the seed).
UPDATE sync.consumers
SET acked_seq = $3
WHERE principal_id = $1
  AND name = $2
