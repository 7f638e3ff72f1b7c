-- The instance's sync epoch.
SELECT sync_epoch
FROM instance.instance
