-- Records a time partition upkeep created, with its bounds.
INSERT INTO sync.event_log_partitions (name, range_start, range_end)
VALUES ($1, $2, $3)
