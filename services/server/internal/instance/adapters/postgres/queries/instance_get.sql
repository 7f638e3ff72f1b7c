-- The instance row (at most one exists).
SELECT id, name, sync_epoch, created_at, version
FROM instance.instance
