-- Stores a new message and one mention row per mentioned principal ($11), in one statement.
WITH created AS (
    INSERT INTO chat.messages (id, thread_id, channel_id, seq, author_id, content_md, created_at, edited_at, redacted_at, external_key)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
    RETURNING id, thread_id, channel_id, seq
)
INSERT INTO chat.mentions (message_id, thread_id, channel_id, seq, principal_id)
SELECT created.id, created.thread_id, created.channel_id, created.seq, p.principal_id
FROM created, unnest($11::uuid[]) AS p (principal_id)
