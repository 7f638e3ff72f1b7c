-- The records with the given natural keys.
SELECT natural_key, kind, repository, channel_id, thread_id, message_id, merge_commit, created_at
FROM ingest.records
WHERE natural_key = ANY($1::text[])
