-- The thread list's baseline: sync's read states of the page's threads (read_states_of_threads.sql).
-- The read states of one principal ($1) of some threads ($2): one probe of the primary key
-- per thread. A thread without a read state gives no row.
SELECT principal_id, thread_id, channel_id, last_read_seq, version
FROM sync.read_states
WHERE principal_id = $1
  AND thread_id = ANY ($2::uuid[])
