-- The snapshot's baseline: every read state of the actor, as sync's personal store reads them.
SELECT principal_id, thread_id, channel_id, last_read_seq, version
FROM sync.read_states
WHERE principal_id = $1
ORDER BY thread_id
