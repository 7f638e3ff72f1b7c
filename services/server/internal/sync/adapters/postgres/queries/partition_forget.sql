-- Forgets a dropped time partition.
DELETE FROM sync.event_log_partitions
WHERE name = $1
