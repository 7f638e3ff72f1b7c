-- Every rotation of the sync epoch, oldest first.
SELECT id, restored_at, how, source, backup_taken_at, head_seq, old_epoch, new_epoch
FROM instance.restores
ORDER BY restored_at, id
