-- The snapshot's baseline: the agents that are not archived, as the agents store lists them.
SELECT principal_id, description, created_by, created_at
FROM agents.agents
WHERE archived_at IS NULL
