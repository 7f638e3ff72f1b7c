-- The catch-up page's baseline: the bare indexed range read of the page's seq window
-- ($1 < seq <= $2, the page's cursor and its next_cursor) by the same index (the primary key
-- (seq, occurred_at) of each partition), every column the page reads, no prefilter, no limit.
SELECT seq, id, type, occurred_at, actor_id, space_id, channel_id, thread_id,
       resource_kind, resource_id, audience_principal_id, receive_action, payload,
       redacted_at IS NOT NULL, correlation_id, trace_context
FROM sync.event_log
WHERE seq > $1
  AND seq <= $2
ORDER BY seq
