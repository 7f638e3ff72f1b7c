-- Stores a new standard channel.
INSERT INTO chat.channels (id, space_id, kind, name, topic, dm_key, version, archived_at, created_at)
VALUES ($1, $2, 'standard', $3, $4, NULL, $5, NULL, $6)
