-- The snapshot's baseline: the instance row, as the instance store's Info reads it.
SELECT id, name, sync_epoch, created_at, version
FROM instance.instance
