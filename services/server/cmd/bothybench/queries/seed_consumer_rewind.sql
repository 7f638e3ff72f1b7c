-- The consumer case: rewinds the agent's ($1) consumer ($2) to seq 0 before each of its rounds,
-- so it starts the whole log behind (an ack never moves a consumer back; this is the seed).
UPDATE sync.consumers
SET acked_seq = 0
WHERE principal_id = $1
  AND name = $2
