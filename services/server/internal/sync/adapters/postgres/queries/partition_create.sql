-- Creates one time partition of the event log. DDL takes no bind parameters, so upkeep formats
-- in the quoted name (1) and the bounds as quoted timestamptz literals (2 and 3), all computed
-- by itself, never taken from input.
CREATE TABLE %[1]s PARTITION OF sync.event_log FOR VALUES FROM (%[2]s) TO (%[3]s)
