-- Stores the changeable columns of a channel.
UPDATE chat.channels
SET name = $2, topic = $3, version = $4, archived_at = $5
WHERE id = $1
