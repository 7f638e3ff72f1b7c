-- Records how far a principal has read a thread: a new row with version 1, or the existing row
-- with its seq and channel replaced and its version raised by one, returned as stored.
INSERT INTO sync.read_states AS r (principal_id, thread_id, channel_id, last_read_seq, version, updated_at)
VALUES ($1, $2, $3, $4, 1, $5)
ON CONFLICT (principal_id, thread_id) DO UPDATE
SET channel_id = EXCLUDED.channel_id,
    last_read_seq = EXCLUDED.last_read_seq,
    version = r.version + 1,
    updated_at = EXCLUDED.updated_at
RETURNING principal_id, thread_id, channel_id, last_read_seq, version
