-- The retention horizon: the highest seq retention ever dropped (0 when none).
SELECT dropped_through_seq
FROM sync.event_log_horizon
