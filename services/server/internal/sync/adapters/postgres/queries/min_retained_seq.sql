-- The lowest seq still in the log (NULL when the log is empty) and the retention horizon, in
-- one snapshot, so a concurrent upkeep cannot be seen half done.
SELECT (SELECT min(seq) FROM sync.event_log),
       (SELECT dropped_through_seq FROM sync.event_log_horizon)
