-- Moves a principal's read state of a thread forward to a seq (the author's own new message):
-- a new row with version 1, or the existing row with its seq and channel replaced and its
-- version raised by one when its seq is below; a row already at or past the seq is left as it
-- is and no row is returned.
INSERT INTO sync.read_states AS r (principal_id, thread_id, channel_id, last_read_seq, version, updated_at)
VALUES ($1, $2, $3, $4, 1, $5)
ON CONFLICT (principal_id, thread_id) DO UPDATE
SET channel_id = EXCLUDED.channel_id,
    last_read_seq = EXCLUDED.last_read_seq,
    version = r.version + 1,
    updated_at = EXCLUDED.updated_at
WHERE r.last_read_seq < EXCLUDED.last_read_seq
RETURNING principal_id, thread_id, channel_id, last_read_seq, version
