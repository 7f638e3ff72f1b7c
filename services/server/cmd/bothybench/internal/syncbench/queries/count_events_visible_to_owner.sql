-- How many events up to the head $1 the owner $2 may receive: every event but the personal
-- events of others. The full catch-up checks the events it counted against it.
SELECT count(*)
FROM sync.event_log
WHERE seq <= $1
  AND (audience_principal_id IS NULL OR audience_principal_id = $2)
