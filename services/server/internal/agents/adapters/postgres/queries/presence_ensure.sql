-- Makes sure the agent has a presence row (a first heartbeat), leaving an existing one as it is.
INSERT INTO agents.agent_presence (agent_id, last_heartbeat_at)
VALUES ($1, $2)
ON CONFLICT (agent_id) DO NOTHING
