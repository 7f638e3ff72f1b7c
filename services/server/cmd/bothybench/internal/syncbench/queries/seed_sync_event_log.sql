-- Generates the sync world's event log in one statement, after the event_seq counter was
-- advanced by $2 in the same transaction (bare_counter_advance.sql): the seqs $1 + 1 .. $1 + $2,
-- one thread.created for each thread of $3 first (in their order), then message.created events,
-- each in a thread picked by a hash of its number, so every stretch of the log mixes all
-- channels. $3 thread ids, $4 their channels, $5 their spaces, $6 the author of everything.
-- The rows have the shape the appender writes for the chat use cases: the event's placement,
-- receive action thread.read, a payload as the use case encodes it (a message's per-thread seq
-- counts its thread's messages in seq order; a message is about 60 characters of Markdown), a
-- correlation id like a request's, and occurred_at from the clock, rising with seq.
WITH threads AS (
    SELECT t.id, t.channel_id, t.space_id, t.ord - 1 AS ix
    FROM unnest($3::uuid[], $4::uuid[], $5::uuid[]) WITH ORDINALITY AS t(id, channel_id, space_id, ord)
),
generated AS (
    SELECT k,
           CASE WHEN k <= cardinality($3::uuid[]) THEN k - 1
                ELSE (hashint8(k) & 2147483647) % cardinality($3::uuid[])
           END AS ix
    FROM generate_series(1, $2::bigint) AS k
),
numbered AS (
    -- n = 0 is the thread's thread.created, n >= 1 its n-th message.
    SELECT k, ix, row_number() OVER (PARTITION BY ix ORDER BY k) - 1 AS n, gen_random_uuid() AS message_id
    FROM generated
)
INSERT INTO sync.event_log (
    seq, id, type, occurred_at, actor_id, space_id, channel_id, thread_id,
    resource_kind, resource_id, audience_principal_id, receive_action, payload,
    redacted_at, correlation_id, trace_context
)
SELECT $1::bigint + e.k, gen_random_uuid(),
       CASE WHEN e.n = 0 THEN 'thread.created' ELSE 'message.created' END,
       clock_timestamp(), $6::uuid, t.space_id, t.channel_id, t.id,
       CASE WHEN e.n = 0 THEN 'thread' ELSE 'message' END,
       CASE WHEN e.n = 0 THEN t.id ELSE e.message_id END,
       NULL, 'thread.read',
       CASE WHEN e.n = 0 THEN
           jsonb_build_object('thread_id', t.id, 'channel_id', t.channel_id,
                              'title', 'Thread ' || (t.ix + 1), 'created_by', $6::uuid, 'version', 1)
       ELSE
           jsonb_build_object('message_id', e.message_id, 'thread_id', t.id, 'channel_id', t.channel_id,
                              'author_id', $6::uuid, 'seq', e.n,
                              'content_md', 'Sam, the deploy is done: the new build is live on every node (' || e.k || ').',
                              'created_at', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
       END,
       NULL, gen_random_uuid()::text, NULL
FROM numbered AS e
JOIN threads AS t ON t.ix = e.ix
ORDER BY e.k
