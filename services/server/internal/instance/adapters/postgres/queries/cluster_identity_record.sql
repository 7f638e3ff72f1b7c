-- Records the identity of the cluster the database runs on.
INSERT INTO instance.cluster_identity (singleton, system_identifier, timeline_id, seen_at)
VALUES (true, $1, $2, $3)
ON CONFLICT (singleton) DO UPDATE
SET system_identifier = excluded.system_identifier, timeline_id = excluded.timeline_id, seen_at = excluded.seen_at
