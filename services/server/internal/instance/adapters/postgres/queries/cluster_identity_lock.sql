-- The identity recorded in the database, locked until the check's transaction ends.
SELECT system_identifier, timeline_id
FROM instance.cluster_identity
FOR UPDATE
