-- Stores a new message and one mention row per mentioned principal ($11), in one statement,
-- and moves its thread's activity (last_message_at) to the message's time. The thread's row
-- is locked already by the advance of its seq in this transaction.
WITH created AS (
    INSERT INTO chat.messages (id, thread_id, channel_id, seq, author_id, content_md, created_at, edited_at, redacted_at, external_key)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
    RETURNING id, thread_id, channel_id, seq
), active AS (
    UPDATE chat.threads
    SET last_message_at = $7
    WHERE id = $2
      AND last_message_at < $7
)
INSERT INTO chat.mentions (message_id, thread_id, channel_id, seq, principal_id)
SELECT created.id, created.thread_id, created.channel_id, created.seq, p.principal_id
FROM created, unnest($11::uuid[]) AS p (principal_id)
