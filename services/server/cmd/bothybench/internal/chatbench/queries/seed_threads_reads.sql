-- Seeds the read states of the reader $1 in the channel $2 in one statement (the read-state
-- use case would take a transaction and an event for each of thousands): of every ten threads
-- (by a hash of the id) four are read to the end, two up to their first message, four never.
INSERT INTO sync.read_states (principal_id, thread_id, channel_id, last_read_seq, version, updated_at)
SELECT $1, t.id, t.channel_id,
       CASE WHEN abs(hashtext(t.id::text)) % 10 < 4 THEN t.last_message_seq ELSE 1 END, 1, now()
FROM chat.threads AS t
WHERE t.channel_id = $2
  AND abs(hashtext(t.id::text)) % 10 < 6
