-- One invocation, locked until the transaction ends (an ack, a reply, a run naming it).
SELECT id, agent_id, message_id, thread_id, channel_id, space_id, invoked_by, reason, attempt, state, created_at,
       delivered_at, updated_at, reply_message_id
FROM agents.invocations
WHERE id = $1
FOR UPDATE
