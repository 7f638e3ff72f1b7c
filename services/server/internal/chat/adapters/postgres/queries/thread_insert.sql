-- Stores a new thread.
INSERT INTO chat.threads (id, channel_id, space_id, title, created_by, created_at, version, last_message_seq, unread_floor_seq)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
