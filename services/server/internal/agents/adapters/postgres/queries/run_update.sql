-- Stores a run's change: state, progress, version and times.
UPDATE agents.runs
SET state = $2, progress = $3, version = $4, updated_at = $5, ended_at = $6, cancelled_by = $7
WHERE id = $1
