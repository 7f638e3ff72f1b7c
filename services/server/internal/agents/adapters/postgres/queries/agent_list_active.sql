-- The profiles of every agent that is not archived (listAgents names and orders them).
SELECT principal_id, description, created_by, created_at
FROM agents.agents
WHERE archived_at IS NULL
