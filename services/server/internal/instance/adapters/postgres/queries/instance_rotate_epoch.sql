-- Rotates the sync epoch to $1, raises the instance row's version and records the rotation, in
-- one statement: the instance row is locked by the UPDATE, so two rotations queue up and each
-- records the epoch it replaced. Returns nothing when the instance row is missing.
WITH rotated AS (
    UPDATE instance.instance AS i
    SET sync_epoch = $1, version = i.version + 1
    FROM (SELECT id, sync_epoch FROM instance.instance FOR UPDATE) AS old
    WHERE i.id = old.id
    RETURNING old.sync_epoch AS old_epoch, i.sync_epoch AS new_epoch
)
INSERT INTO instance.restores (id, restored_at, how, source, backup_taken_at, head_seq, old_epoch, new_epoch)
SELECT $2, $3, $4, $5, $6,
       (SELECT value FROM instance.sequence_counters WHERE name = 'event_seq'),
       rotated.old_epoch, rotated.new_epoch
FROM rotated
RETURNING id, restored_at, how, source, backup_taken_at, head_seq, old_epoch, new_epoch
