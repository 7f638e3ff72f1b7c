-- The partition slots ($1 seconds long, aligned from the Unix epoch in UTC) of the rows being
-- moved out of the default partition, each with its number of rows.
SELECT date_bin(make_interval(secs => $1), occurred_at, '1970-01-01 00:00:00+00') AS slot,
       count(*)
FROM pg_temp.event_log_moving
GROUP BY slot
ORDER BY slot
