-- Stores a new thread; its activity starts at its creation, the time of its first message.
INSERT INTO chat.threads (id, channel_id, space_id, title, created_by, created_at, version, last_message_seq, unread_floor_seq, last_message_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $6)
