-- Moves every row of the default partition into a temporary table dropped at COMMIT, so that
-- time partitions overlapping those rows can be created (PostgreSQL refuses a partition whose
-- range holds rows of the default partition). Returns nothing; the caller counts the rows.
CREATE TEMP TABLE event_log_moving (LIKE sync.event_log) ON COMMIT DROP;
WITH moved AS (
    DELETE FROM sync.event_log_default
    RETURNING *
)
INSERT INTO pg_temp.event_log_moving
SELECT * FROM moved
