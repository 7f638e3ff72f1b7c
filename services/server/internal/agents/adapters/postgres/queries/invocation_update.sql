-- Stores an invocation's attempt, state, times and reply.
UPDATE agents.invocations
SET attempt = $2, state = $3, delivered_at = $4, updated_at = $5, reply_message_id = $6
WHERE id = $1
