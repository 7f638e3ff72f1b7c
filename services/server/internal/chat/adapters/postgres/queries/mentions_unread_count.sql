-- Per thread of a batch of channels ($2), the mentions of a principal ($1) in messages above
-- both the thread's unread floor and the principal's read seq of the thread (the pairs of
-- thread ids $3 and read seqs $4; 0 for a thread not among them). Threads without such
-- mentions give no row.
SELECT mn.thread_id, count(*)
FROM chat.mentions mn
JOIN chat.threads t ON t.id = mn.thread_id
LEFT JOIN unnest($3::uuid[], $4::bigint[]) AS r (thread_id, last_read_seq) ON r.thread_id = mn.thread_id
WHERE mn.principal_id = $1
  AND mn.channel_id = ANY ($2::uuid[])
  AND mn.seq > t.unread_floor_seq
  AND mn.seq > coalesce(r.last_read_seq, 0)
GROUP BY mn.thread_id
