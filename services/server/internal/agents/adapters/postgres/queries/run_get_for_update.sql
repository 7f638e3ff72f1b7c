-- One run by id, locked until the transaction ends, so that concurrent changes of a run
-- apply one after the other to the state each leaves.
SELECT id, agent_id, thread_id, channel_id, space_id, requested_by, invocation_id,
       state, progress, version, created_at, updated_at, ended_at, cancelled_by
FROM agents.runs
WHERE id = $1
FOR UPDATE
