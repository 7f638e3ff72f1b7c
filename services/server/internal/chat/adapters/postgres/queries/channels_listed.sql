-- The channels of a listing that are not archived and lie in no archived space: the standard
-- channels of every space ($1), of some spaces ($2) or with some ids ($3), and the direct
-- messages a principal takes part in ($4); by name (byte order) then id, so the direct
-- messages, which have no name, come first.
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
