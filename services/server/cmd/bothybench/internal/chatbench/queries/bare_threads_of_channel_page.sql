-- The thread list's baseline: chat's page query (threads_of_channel_page.sql), as it is.
-- At most $4 threads of a channel ($1) in activity order, newest first, that come after the
-- position ($2, $3) = (last_message_at, id) of the previous page's last thread ('infinity'
-- and any id for the first page), with the first $5 characters of the first message, whether
-- that message is deleted, the newest message's time, and the seqs of the newest $7 messages
-- of the thread above its unread floor that mention the reader ($6), newest first: the
-- reader's read positions live in sync, so the list counts its unread mentions from these in
-- Go once it has them, instead of asking again. The index threads_channel_activity is read
-- backwards from the position, so a page costs the same at any depth; the mentions are one
-- probe of mentions_principal per thread, read backwards from the newest.
SELECT t.id, t.channel_id, t.space_id, t.title, t.created_by, t.created_at, t.version,
       t.last_message_seq, t.unread_floor_seq, t.last_message_at,
       coalesce(left(fm.content_md, $5), ''), fm.redacted_at IS NOT NULL,
       ARRAY(SELECT mn.seq
             FROM chat.mentions mn
             WHERE mn.principal_id = $6 AND mn.channel_id = t.channel_id AND mn.thread_id = t.id
               AND mn.seq > t.unread_floor_seq
             ORDER BY mn.seq DESC
             LIMIT $7)
FROM chat.threads t
LEFT JOIN chat.messages fm ON fm.thread_id = t.id AND fm.seq = 1
WHERE t.channel_id = $1
  AND (t.last_message_at, t.id) < ($2::timestamptz, $3::uuid)
ORDER BY t.last_message_at DESC, t.id DESC
LIMIT $4
