-- Routes the rows moved out of the default partition into the time partitions now covering them.
INSERT INTO sync.event_log
SELECT * FROM pg_temp.event_log_moving
