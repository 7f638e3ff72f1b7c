-- Stores one agent's presence as the use case decided it.
UPDATE agents.agent_presence
SET last_heartbeat_at = $2,
    reported_billing_mode = $3,
    announced_state = $4,
    announced_billing_mode = $5,
    announced_at = $6
WHERE agent_id = $1
