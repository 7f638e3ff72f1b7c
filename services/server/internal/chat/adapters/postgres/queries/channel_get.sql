-- The channel with an id, archived or not, with a direct message's participants in id order.
SELECT c.id, c.space_id, c.kind, c.name, c.topic, c.version, c.archived_at, c.created_at,
       ARRAY(SELECT p.principal_id FROM chat.dm_participants p WHERE p.channel_id = c.id ORDER BY p.principal_id)
FROM chat.channels c
WHERE c.id = $1
