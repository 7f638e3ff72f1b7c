-- The time partitions of the event log that exist, in time order.
SELECT name, range_start, range_end
FROM sync.event_log_partitions
ORDER BY range_start
