-- The thread list's baseline: chat's page query (threads_of_channel_page.sql), as it is.
-- At most $4 threads of a channel ($1) in activity order, newest first, that come after the
-- position ($2, $3) = (last_message_at, id) of the previous page's last thread ('infinity'
-- and any id for the first page), with the first $5 characters of the first message, whether
-- that message is deleted, and the newest message's time. The index threads_channel_activity
-- is read backwards from the position, so a page costs the same at any depth.
SELECT t.id, t.channel_id, t.space_id, t.title, t.created_by, t.created_at, t.version,
       t.last_message_seq, t.unread_floor_seq, t.last_message_at,
       coalesce(left(fm.content_md, $5), ''), fm.redacted_at IS NOT NULL
FROM chat.threads t
LEFT JOIN chat.messages fm ON fm.thread_id = t.id AND fm.seq = 1
WHERE t.channel_id = $1
  AND (t.last_message_at, t.id) < ($2::timestamptz, $3::uuid)
ORDER BY t.last_message_at DESC, t.id DESC
LIMIT $4
