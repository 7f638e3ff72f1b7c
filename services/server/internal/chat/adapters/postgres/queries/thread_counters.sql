-- The threads of a batch of channels that have messages above their unread floor, with what
-- unread counting needs.
SELECT id, channel_id, space_id, last_message_seq, unread_floor_seq, version
FROM chat.threads
WHERE channel_id = ANY ($1::uuid[])
  AND last_message_seq > unread_floor_seq
ORDER BY channel_id, id
