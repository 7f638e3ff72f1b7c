-- The space with an id, locked until the transaction ends (an update follows).
SELECT id, name, description, version, archived_at, created_at
FROM chat.spaces
WHERE id = $1
FOR UPDATE
