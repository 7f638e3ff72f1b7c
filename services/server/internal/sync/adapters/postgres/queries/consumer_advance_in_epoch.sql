-- Moves a consumer's acked_seq forward to $3 when it is behind $3 and was created in the epoch
-- $5, under the row's lock (the conditions are checked again on the row's newest version);
-- updated_at becomes $4. Returns the row after the statement, or nothing when the consumer is
-- missing, in another epoch or not behind: then nothing is written.
UPDATE sync.consumers
SET acked_seq = $3,
    updated_at = $4
WHERE principal_id = $1 AND name = $2
  AND acked_seq < $3
  AND sync_epoch = $5
RETURNING principal_id, name, acked_seq, sync_epoch, created_at, updated_at
