-- One run by id.
SELECT id, agent_id, thread_id, channel_id, space_id, requested_by, invocation_id,
       state, progress, version, created_at, updated_at, ended_at, cancelled_by
FROM agents.runs
WHERE id = $1
