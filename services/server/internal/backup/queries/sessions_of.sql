-- The client sessions connected to database $1: those of this restore (application name $2,
-- ending after their close) and the others.
SELECT count(*) FILTER (WHERE application_name = $2),
       count(*) FILTER (WHERE application_name IS DISTINCT FROM $2)
FROM pg_catalog.pg_stat_activity
WHERE datname = $1 AND backend_type = 'client backend';
