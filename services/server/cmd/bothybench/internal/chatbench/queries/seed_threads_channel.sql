-- Seeds $4 threads of the channel $1 (in space $2, started by $3) with their first messages in
-- one statement: the thread use case would take a transaction, a first message and two events
-- per thread, far too long for ten thousand. Each thread has 1 to 20 messages (only the first
-- is a row: the list reads the newest one's seq and time from the thread) and a last activity
-- spread over the 30 days before now, so the list's order is not the order of the ids.
WITH s AS (
    SELECT g, now() - (random() * interval '30 days') AS active
    FROM generate_series(1, $4::int) AS g
), t AS (
    INSERT INTO chat.threads (
        id, channel_id, space_id, title, created_by, created_at, version, last_message_seq,
        unread_floor_seq, last_message_at
    )
    SELECT gen_random_uuid(), $1, $2, 'Thread ' || s.g, $3, s.active - interval '1 hour',
           1 + s.g % 20, 1 + s.g % 20, 0, s.active
    FROM s
    RETURNING id, channel_id, created_by, created_at
)
INSERT INTO chat.messages (id, thread_id, channel_id, seq, author_id, content_md, created_at)
SELECT gen_random_uuid(), t.id, t.channel_id, 1, t.created_by,
       'The build on the staging cluster failed again after the last deploy; the logs point at the migration step, which times out while the index is built. Who can have a look before the release?',
       t.created_at
FROM t
