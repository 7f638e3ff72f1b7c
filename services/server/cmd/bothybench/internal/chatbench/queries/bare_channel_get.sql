-- The thread list's baseline: the channel row its authorization places the channel with, as
-- chat's store reads it (queries/channel_get.sql).
SELECT c.id, c.space_id, c.kind, c.name, c.topic, c.version, c.archived_at, c.created_at,
       ARRAY(SELECT p.principal_id FROM chat.dm_participants p WHERE p.channel_id = c.id ORDER BY p.principal_id)
FROM chat.channels c
WHERE c.id = $1
