-- The message with an id like message_get.sql, locked until the transaction ends (an update
-- follows).
SELECT m.id, m.thread_id, m.channel_id, t.space_id, m.seq, m.author_id, m.content_md, m.created_at,
       m.edited_at, m.redacted_at, m.external_key, m.invocation_id,
       ARRAY(SELECT mn.principal_id FROM chat.mentions mn WHERE mn.message_id = m.id ORDER BY mn.principal_id)
FROM chat.messages m
JOIN chat.threads t ON t.id = m.thread_id
WHERE m.id = $1
FOR UPDATE OF m
