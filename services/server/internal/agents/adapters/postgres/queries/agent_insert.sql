-- Stores the profile of a new agent.
INSERT INTO agents.agents (principal_id, description, created_by, created_at)
VALUES ($1, $2, $3, $4)
