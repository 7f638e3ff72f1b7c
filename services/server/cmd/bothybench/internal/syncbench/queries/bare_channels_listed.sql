-- The snapshot's baseline: the channels of the actor's Scope, as chat's Channels.ListVisible reads
-- them ($1 every standard channel, $2 fully visible spaces, $3 granted channels, $4 the
-- participant of direct messages).
SELECT c.id, c.space_id, c.kind, c.name, c.topic, c.version, c.archived_at, c.created_at,
       ARRAY(SELECT p.principal_id FROM chat.dm_participants p WHERE p.channel_id = c.id ORDER BY p.principal_id)
FROM chat.channels c
LEFT JOIN chat.spaces s ON s.id = c.space_id
WHERE c.archived_at IS NULL
  AND s.archived_at IS NULL
  AND (
        (c.kind = 'standard' AND ($1::boolean OR c.space_id = ANY ($2::uuid[]) OR c.id = ANY ($3::uuid[])))
     OR (c.kind = 'dm' AND c.id IN (SELECT p.channel_id FROM chat.dm_participants p WHERE p.principal_id = $4))
  )
ORDER BY c.name COLLATE "C", c.id
