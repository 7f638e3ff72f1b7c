-- Posts the message $1 in the thread $2 in one statement (author $3, text $4, time $5, edit and
-- redaction times $6 and $7, external key $8, the invocation it answers $10 or NULL): gives it the thread's next seq (last_message_seq and
-- version advanced by one), stores it with one mention row per mentioned principal ($9) and
-- moves the thread's activity (last_message_at) to its time. The UPDATE's row lock is held
-- until the transaction ends, so the posters of one thread take their seqs one after the
-- other, each from the other's committed result. The message's time is $5 or, when a poster
-- that took its time earlier got the lock first, the thread's last activity: created_at never
-- falls as seq rises within a thread. A thread of an archived channel is advanced but nothing
-- is stored; the use case refuses the message and rolls the advance back. Returns the thread
-- as advanced, whether its channel is archived and the message's time.
WITH advanced AS (
    UPDATE chat.threads t
    SET last_message_seq = t.last_message_seq + 1,
        version = t.version + 1,
        last_message_at = greatest(t.last_message_at, $5)
    FROM chat.channels c
    WHERE t.id = $2
      AND c.id = t.channel_id
    RETURNING t.id, t.channel_id, t.space_id, t.title, t.created_by, t.created_at, t.version,
              t.last_message_seq, t.unread_floor_seq, c.archived_at IS NOT NULL AS archived,
              t.last_message_at
), created AS (
    INSERT INTO chat.messages (id, thread_id, channel_id, seq, author_id, content_md, created_at, edited_at, redacted_at, external_key, invocation_id)
    SELECT $1, a.id, a.channel_id, a.last_message_seq, $3, $4, a.last_message_at, $6, $7, $8, $10
    FROM advanced AS a
    WHERE NOT a.archived
    RETURNING id, thread_id, channel_id, seq
), mentioned AS (
    INSERT INTO chat.mentions (message_id, thread_id, channel_id, seq, principal_id)
    SELECT created.id, created.thread_id, created.channel_id, created.seq, p.principal_id
    FROM created, unnest($9::uuid[]) AS p (principal_id)
)
SELECT id, channel_id, space_id, title, created_by, created_at, version, last_message_seq,
       unread_floor_seq, archived, last_message_at
FROM advanced
