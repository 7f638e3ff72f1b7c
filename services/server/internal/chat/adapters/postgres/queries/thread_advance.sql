-- Gives a thread's next seq to a new message: advances last_message_seq and version by one.
-- The row lock the UPDATE takes is held until the transaction ends, so the posters of one
-- thread take their seqs one after the other, each from the other's committed result. Returns
-- the thread as updated and whether its channel is archived.
UPDATE chat.threads t
SET last_message_seq = t.last_message_seq + 1,
    version = t.version + 1
FROM chat.channels c
WHERE t.id = $1
  AND c.id = t.channel_id
RETURNING t.id, t.channel_id, t.space_id, t.title, t.created_by, t.created_at, t.version,
          t.last_message_seq, t.unread_floor_seq, c.archived_at IS NOT NULL
