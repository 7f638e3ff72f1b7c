-- Stores a principal's reaction; a reaction the principal made already stays as it is (no row
-- is affected).
INSERT INTO chat.reactions (message_id, principal_id, reaction, created_at)
VALUES ($1, $2, $3, $4)
ON CONFLICT (message_id, reaction, principal_id) DO NOTHING
