-- Inserts every event one transaction appended, in one statement, in the commit phase. The
-- event_seq advance queued before it in the same batch took the counter's row lock and published
-- the new head as the transaction-local setting bothy.event_seq, so the seqs are head - n + 1 ..
-- head, in the order of the arrays (WITH ORDINALITY), without naming the instance schema.
-- occurred_at is one clock_timestamp() per transaction, taken after the lock, so it rises with
-- seq. Arrays, all of the same length: 1 id, 2 type, 3 actor, 4 space, 5 channel, 6 thread,
-- 7 resource kind, 8 resource id, 9 audience, 10 receive action ('' for personal), 11 payload,
-- 12 redacted, 13 correlation id ('' for none), 14 trace context (NULL for none).
WITH head AS MATERIALIZED (
    SELECT current_setting('bothy.event_seq')::bigint AS last_seq,
           clock_timestamp() AS at
)
INSERT INTO sync.event_log (
    seq, id, type, occurred_at, actor_id, space_id, channel_id, thread_id,
    resource_kind, resource_id, audience_principal_id, receive_action, payload,
    redacted_at, correlation_id, trace_context
)
SELECT head.last_seq - cardinality($1::uuid[]) + e.ord,
       e.id, e.type, head.at, e.actor_id, e.space_id, e.channel_id, e.thread_id,
       e.resource_kind, e.resource_id, e.audience_id, nullif(e.receive_action, ''),
       e.payload::jsonb,
       CASE WHEN e.redacted THEN head.at END,
       nullif(e.correlation_id, ''),
       e.trace_context::jsonb
FROM head,
     unnest($1::uuid[], $2::text[], $3::uuid[], $4::uuid[], $5::uuid[], $6::uuid[], $7::text[],
            $8::uuid[], $9::uuid[], $10::text[], $11::text[], $12::boolean[], $13::text[],
            $14::text[])
     WITH ORDINALITY AS e(id, type, actor_id, space_id, channel_id, thread_id, resource_kind,
                          resource_id, audience_id, receive_action, payload, redacted,
                          correlation_id, trace_context, ord)
