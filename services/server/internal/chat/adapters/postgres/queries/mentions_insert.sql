-- Stores one mention row per mentioned principal ($5) of a message.
INSERT INTO chat.mentions (message_id, thread_id, channel_id, seq, principal_id)
SELECT $1, $2, $3, $4, p.principal_id
FROM unnest($5::uuid[]) AS p (principal_id)
