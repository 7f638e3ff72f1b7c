-- One catch-up page (spec 03, Page): at most $3 events with $1 < seq <= $2 (the page's scan
-- window, never beyond the head) that pass the reader's prefilter, in seq order. The seq range
-- is the index condition (the primary key (seq, occurred_at) of every partition, merged in seq
-- order), so a page reads at most $2 - $1 rows however few the reader may see; the prefilter
-- only narrows them for speed, and the caller decides every row again (the audience rule,
-- then authorize). $4 is the reader, $5 whether it is instance-wide, $6 its granted channels,
-- $7 its fully visible spaces (space grants), $8 its visible spaces. The id sets are matched
-- through IN (SELECT unnest(...)) so PostgreSQL hashes them once per statement, also in a
-- generic plan, instead of comparing each row with every element.
SELECT seq, id, type, occurred_at, actor_id, space_id, channel_id, thread_id,
       resource_kind, resource_id, audience_principal_id, receive_action, payload,
       redacted_at IS NOT NULL, correlation_id, trace_context
FROM sync.event_log
WHERE seq > $1
  AND seq <= $2
  AND (audience_principal_id = $4
       OR (audience_principal_id IS NULL
           AND ($5::boolean
                OR channel_id IN (SELECT unnest($6::uuid[]))
                OR space_id IN (SELECT unnest($7::uuid[]))
                OR (channel_id IS NULL AND space_id IN (SELECT unnest($8::uuid[])))
                OR (channel_id IS NULL AND space_id IS NULL))))
ORDER BY seq
LIMIT $3
