-- At most $2 (agents.run_expiry_batch) queued or running runs last updated before $1 (now
-- minus agents.run_stale_after), oldest first, locked for the expiry sweep (ADR 0032). Read
-- through the partial index runs_in_progress in its order, filtering on updated_at: the runs
-- in progress are a small part of all runs. Rows another transaction holds (an update, a
-- cancellation) are skipped: that transaction decides them, and the next sweep looks again.
SELECT id, agent_id, thread_id, channel_id, space_id, requested_by, invocation_id,
       state, progress, version, created_at, updated_at, ended_at, cancelled_by
FROM agents.runs
WHERE state IN ('queued', 'running')
  AND updated_at < $1
ORDER BY created_at, id
LIMIT $2
FOR UPDATE SKIP LOCKED
