-- The snapshot's baseline: the sync epoch, as instance.Versions reads it.
SELECT sync_epoch
FROM instance.instance
