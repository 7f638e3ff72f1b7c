-- The client sessions connected to the current database besides this one, and the
-- application names they gave: a restore refuses while there are any.
SELECT count(*), coalesce(string_agg(DISTINCT nullif(application_name, ''), ', '), '')
FROM pg_catalog.pg_stat_activity
WHERE datname = pg_catalog.current_database() AND pid <> pg_catalog.pg_backend_pid()
  AND backend_type = 'client backend';
