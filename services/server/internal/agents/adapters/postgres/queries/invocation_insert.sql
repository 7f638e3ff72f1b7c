-- Stores a new invocation, in the transaction of the message that made it.
INSERT INTO agents.invocations (id, agent_id, message_id, thread_id, channel_id, space_id, invoked_by, reason,
                                attempt, state, created_at, delivered_at, updated_at, reply_message_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
