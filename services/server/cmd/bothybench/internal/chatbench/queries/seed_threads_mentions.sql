-- Seeds one unread mention of $2 in one of every ten threads of the channel $1 that have
-- replies and that $2 has not read to the end, counted in the list's order (newest activity
-- first), so the first page always carries mentioned threads: the message row (the mention's
-- foreign key needs it; author $3) and the mention, in one statement. Run after the read
-- states.
WITH picked AS (
    SELECT t.id, t.channel_id, t.last_message_seq, t.last_message_at,
           row_number() OVER (ORDER BY t.last_message_at DESC, t.id DESC) AS rank
    FROM chat.threads AS t
    LEFT JOIN sync.read_states AS r ON r.thread_id = t.id AND r.principal_id = $2
    WHERE t.channel_id = $1
      AND t.last_message_seq > 1
      AND coalesce(r.last_read_seq, 0) < t.last_message_seq
), m AS (
    INSERT INTO chat.messages (id, thread_id, channel_id, seq, author_id, content_md, created_at)
    SELECT gen_random_uuid(), p.id, p.channel_id, p.last_message_seq, $3, '@sam can you check this?', p.last_message_at
    FROM picked AS p
    WHERE p.rank % 10 = 1
    RETURNING id, thread_id, channel_id, seq
)
INSERT INTO chat.mentions (message_id, thread_id, channel_id, seq, principal_id)
SELECT m.id, m.thread_id, m.channel_id, m.seq, $2
FROM m
