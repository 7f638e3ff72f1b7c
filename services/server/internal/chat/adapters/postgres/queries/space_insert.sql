-- Stores a new space.
INSERT INTO chat.spaces (id, name, description, version, archived_at, created_at)
VALUES ($1, $2, $3, $4, $5, $6)
