-- The snapshot's baseline: the actor's ($1) unread mentions per thread of the visible channels
-- ($2) above the read seqs ($3 threads, $4 seqs), as chat's Mentions.CountUnread counts them.
SELECT mn.thread_id, count(*)
FROM chat.mentions mn
JOIN chat.threads t ON t.id = mn.thread_id
LEFT JOIN unnest($3::uuid[], $4::bigint[]) AS r (thread_id, last_read_seq) ON r.thread_id = mn.thread_id
WHERE mn.principal_id = $1
  AND mn.channel_id = ANY ($2::uuid[])
  AND mn.seq > t.unread_floor_seq
  AND mn.seq > coalesce(r.last_read_seq, 0)
GROUP BY mn.thread_id
