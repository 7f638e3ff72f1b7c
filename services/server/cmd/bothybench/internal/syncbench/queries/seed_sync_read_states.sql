-- Seeds the read states of the snapshot's person $1 in one statement (the read-state use case
-- would take a transaction and an event for each of thousands): for each thread of $2, read up
-- to its newest message minus the matching count of $3 (0: read to the end), never below 0.
INSERT INTO sync.read_states (principal_id, thread_id, channel_id, last_read_seq, version, updated_at)
SELECT $1, t.id, t.channel_id, greatest(t.last_message_seq - r.unread, 0), 1, now()
FROM unnest($2::uuid[], $3::bigint[]) AS r(thread_id, unread)
JOIN chat.threads AS t ON t.id = r.thread_id
