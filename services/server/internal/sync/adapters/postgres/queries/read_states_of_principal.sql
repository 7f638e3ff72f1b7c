-- Every read state of one principal, by thread id (the primary key's order).
SELECT principal_id, thread_id, channel_id, last_read_seq, version
FROM sync.read_states
WHERE principal_id = $1
ORDER BY thread_id
