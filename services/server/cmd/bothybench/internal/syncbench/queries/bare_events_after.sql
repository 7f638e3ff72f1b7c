-- The full catch-up's baseline: the bare read loop's page, at most $2 events with seq > $1 in
-- seq order, every column the page reads, no prefilter.
SELECT seq, id, type, occurred_at, actor_id, space_id, channel_id, thread_id,
       resource_kind, resource_id, audience_principal_id, receive_action, payload,
       redacted_at IS NOT NULL, correlation_id, trace_context
FROM sync.event_log
WHERE seq > $1
ORDER BY seq
LIMIT $2
