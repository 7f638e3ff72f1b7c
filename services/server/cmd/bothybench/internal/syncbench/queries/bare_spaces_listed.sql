-- The snapshot's baseline: the spaces of the actor's Scope that are not archived, as chat's
-- Spaces.List reads them ($1 every space, $2 the visible spaces).
SELECT id, name, description, version, archived_at, created_at
FROM chat.spaces
WHERE archived_at IS NULL
  AND ($1::boolean OR id = ANY ($2::uuid[]))
ORDER BY name COLLATE "C", id
