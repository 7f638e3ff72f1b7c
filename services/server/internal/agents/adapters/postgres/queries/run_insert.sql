-- Stores a new run.
INSERT INTO agents.runs (id, agent_id, thread_id, channel_id, space_id, requested_by, invocation_id,
                         state, progress, version, created_at, updated_at, ended_at, cancelled_by)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
