-- The pending invocations whose last delivery is at or before $1 (now minus
-- agents.invocation_ack_timeout), oldest delivery first, at most $2
-- (agents.invocation_sweep_batch), read with the partial index on the pending ones. Rows
-- another transaction holds (an ack, a reply) are skipped: that transaction decides them.
SELECT id, agent_id, message_id, thread_id, channel_id, space_id, invoked_by, reason, attempt, state, created_at,
       delivered_at, updated_at, reply_message_id
FROM agents.invocations
WHERE state = 'pending'
  AND delivered_at <= $1
ORDER BY delivered_at, id
LIMIT $2
FOR UPDATE SKIP LOCKED
