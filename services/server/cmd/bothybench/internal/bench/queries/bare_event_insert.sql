-- The bare baseline's insert step: the same rows the appender writes (seqs last - n + 1 .. last,
-- occurred_at from the database clock after the counter lock), from the same arrays.
-- $1 last seq, $2 ids, $3 actor, $4 space, $5 channel, $6 thread, $7 resource ids,
-- $8 payloads (all of one message.created shape).
INSERT INTO sync.event_log (
    seq, id, type, occurred_at, actor_id, space_id, channel_id, thread_id,
    resource_kind, resource_id, receive_action, payload
)
SELECT $1::bigint - cardinality($2::uuid[]) + e.ord, e.id, 'message.created', clock_timestamp(),
       e.actor_id, e.space_id, e.channel_id, e.thread_id, 'message', e.resource_id, 'thread.read',
       e.payload::jsonb
FROM unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::uuid[], $7::uuid[], $8::text[])
     WITH ORDINALITY AS e(id, actor_id, space_id, channel_id, thread_id, resource_id, payload, ord)
