-- Seeds one mention of $2 in the newest message of one thread in ten of the channel $1 that
-- has replies: the message row (the mention's foreign key needs it; author $3) and the
-- mention, in one statement.
WITH m AS (
    INSERT INTO chat.messages (id, thread_id, channel_id, seq, author_id, content_md, created_at)
    SELECT gen_random_uuid(), t.id, t.channel_id, t.last_message_seq, $3, '@sam can you check this?', t.last_message_at
    FROM chat.threads AS t
    WHERE t.channel_id = $1
      AND t.last_message_seq > 1
      AND abs(hashtext(t.id::text || 'm')) % 10 = 0
    RETURNING id, thread_id, channel_id, seq
)
INSERT INTO chat.mentions (message_id, thread_id, channel_id, seq, principal_id)
SELECT m.id, m.thread_id, m.channel_id, m.seq, $2
FROM m
