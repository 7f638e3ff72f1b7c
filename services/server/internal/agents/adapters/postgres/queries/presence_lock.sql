-- One agent's presence, locked for the rest of the transaction.
SELECT agent_id, last_heartbeat_at, reported_billing_mode, announced_state, announced_billing_mode, announced_at
FROM agents.agent_presence
WHERE agent_id = $1
FOR UPDATE
