-- Stores the changeable columns of a space.
UPDATE chat.spaces
SET name = $2, description = $3, version = $4, archived_at = $5
WHERE id = $1
