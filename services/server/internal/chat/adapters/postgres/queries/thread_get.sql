-- The thread with an id.
SELECT id, channel_id, space_id, title, created_by, created_at, version, last_message_seq, unread_floor_seq
FROM chat.threads
WHERE id = $1
