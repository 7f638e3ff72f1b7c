-- Seeds one mention of $2 in the newest message of each thread of $1 that has messages: the
-- message row (the mention's foreign key needs it; text $4, author $3) and the mention, in one
-- statement. The mention count of the snapshot reads only chat.mentions and chat.threads.
WITH m AS (
    INSERT INTO chat.messages (id, thread_id, channel_id, seq, author_id, content_md, created_at)
    SELECT gen_random_uuid(), t.id, t.channel_id, t.last_message_seq, $3, $4, now()
    FROM chat.threads AS t
    WHERE t.id = ANY ($1::uuid[])
      AND t.last_message_seq > 0
    RETURNING id, thread_id, channel_id, seq
)
INSERT INTO chat.mentions (message_id, thread_id, channel_id, seq, principal_id)
SELECT m.id, m.thread_id, m.channel_id, m.seq, $2
FROM m
