-- The runs in progress (queued or running) the reader's prefilter admits, oldest first:
-- $1 every run (an instance grant), else those in the channels of $3 or the spaces of $2
-- (app.RunFilter). Read through the partial index runs_in_progress.
SELECT id, agent_id, thread_id, channel_id, space_id, requested_by, invocation_id,
       state, progress, version, created_at, updated_at, ended_at, cancelled_by
FROM agents.runs
WHERE state IN ('queued', 'running')
  AND ($1::boolean OR channel_id = ANY($3::uuid[]) OR space_id = ANY($2::uuid[]))
ORDER BY created_at, id
