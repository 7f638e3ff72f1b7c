-- The snapshot's baseline: the counters of the threads of the visible channels ($1) with messages
-- above their unread floor, as chat's Threads.Counters reads them.
SELECT id, channel_id, space_id, last_message_seq, unread_floor_seq, version
FROM chat.threads
WHERE channel_id = ANY ($1::uuid[])
  AND last_message_seq > unread_floor_seq
ORDER BY channel_id, id
