-- The presences the sweeper may announce: none announced within agents.presence_min_interval
-- ($1 is now minus that interval). Rows another transaction holds are skipped (a heartbeat
-- decides them itself). Agents are few, so the sweep reads them all; the use case decides.
SELECT agent_id, last_heartbeat_at, reported_billing_mode, announced_state, announced_billing_mode, announced_at
FROM agents.agent_presence
WHERE announced_at IS NULL OR announced_at <= $1
ORDER BY agent_id
FOR UPDATE SKIP LOCKED
