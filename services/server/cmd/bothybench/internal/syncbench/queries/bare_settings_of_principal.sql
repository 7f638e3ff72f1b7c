-- The snapshot's baseline: every setting of the actor, as sync's personal store reads them.
SELECT principal_id, key, value, version
FROM sync.user_settings
WHERE principal_id = $1
ORDER BY key COLLATE "C"
