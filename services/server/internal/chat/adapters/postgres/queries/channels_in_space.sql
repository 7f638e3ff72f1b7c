-- The channels of a space that are not archived, by name (byte order) then id.
SELECT c.id, c.space_id, c.kind, c.name, c.topic, c.version, c.archived_at, c.created_at, '{}'::uuid[]
FROM chat.channels c
WHERE c.space_id = $1
  AND c.kind = 'standard'
  AND c.archived_at IS NULL
ORDER BY c.name COLLATE "C", c.id
