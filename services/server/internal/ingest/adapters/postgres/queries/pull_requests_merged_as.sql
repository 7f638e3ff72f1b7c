-- The pull request records merged as one of the given commits.
SELECT natural_key, kind, repository, channel_id, thread_id, message_id, merge_commit, created_at
FROM ingest.records
WHERE merge_commit = ANY($1::text[])
  AND kind = 'pr'
