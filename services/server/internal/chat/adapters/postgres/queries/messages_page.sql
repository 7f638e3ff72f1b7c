-- At most $3 messages of a thread with a seq above $2, in seq order, with their thread's space,
-- the invocation each answers (NULL for none) and their mentions in id order.
SELECT m.id, m.thread_id, m.channel_id, t.space_id, m.seq, m.author_id, m.content_md, m.created_at,
       m.edited_at, m.redacted_at, m.external_key, m.invocation_id,
       ARRAY(SELECT mn.principal_id FROM chat.mentions mn WHERE mn.message_id = m.id ORDER BY mn.principal_id)
FROM chat.messages m
JOIN chat.threads t ON t.id = m.thread_id
WHERE m.thread_id = $1
  AND m.seq > $2
ORDER BY m.seq
LIMIT $3
