-- At most $2 records whose natural key starts with $1 (an abbreviated commit id's key prefix,
-- with LIKE's wildcards and its escape character escaped by the caller), in key order.
SELECT natural_key, kind, repository, channel_id, thread_id, message_id, merge_commit, created_at
FROM ingest.records
WHERE natural_key LIKE $1 || '%'
ORDER BY natural_key
LIMIT $2
