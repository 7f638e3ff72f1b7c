-- The identity of the cluster the session runs on: its system identifier and current timeline.
SELECT s.system_identifier::text, c.timeline_id::bigint
FROM pg_catalog.pg_control_system() AS s, pg_catalog.pg_control_checkpoint() AS c
