-- The thread list's baseline: chat's mention count of a page (mentions_unread_count_of_threads.sql).
-- Per thread of a page of one channel's threads ($2 the channel, $3 the thread ids, $4 the
-- principal's read seqs of them, 0 for none), the mentions of a principal ($1) in messages
-- above both the thread's unread floor and the read seq: the rule of mentions_unread_count.sql
-- (the snapshot's count), for the threads of one page, so a channel's thread list probes the
-- mention index once per thread it shows instead of counting the whole channel. Threads
-- without such mentions give no row.
SELECT mn.thread_id, count(*)
FROM unnest($3::uuid[], $4::bigint[]) AS r (thread_id, last_read_seq)
JOIN chat.threads t ON t.id = r.thread_id
JOIN chat.mentions mn ON mn.principal_id = $1 AND mn.channel_id = $2 AND mn.thread_id = r.thread_id
WHERE mn.seq > t.unread_floor_seq
  AND mn.seq > r.last_read_seq
GROUP BY mn.thread_id
