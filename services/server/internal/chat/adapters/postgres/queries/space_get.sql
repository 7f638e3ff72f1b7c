-- The space with an id, archived or not.
SELECT id, name, description, version, archived_at, created_at
FROM chat.spaces
WHERE id = $1
