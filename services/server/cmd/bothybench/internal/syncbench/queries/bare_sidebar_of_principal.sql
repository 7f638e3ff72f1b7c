-- The snapshot's baseline: the actor's sidebar, as sync's personal store reads it.
SELECT principal_id, sections, version
FROM sync.sidebar
WHERE principal_id = $1
