-- The spaces that are not archived of a listing: every one ($1) or those with the ids ($2),
-- by name (byte order) then id.
SELECT id, name, description, version, archived_at, created_at
FROM chat.spaces
WHERE archived_at IS NULL
  AND ($1::boolean OR id = ANY ($2::uuid[]))
ORDER BY name COLLATE "C", id
