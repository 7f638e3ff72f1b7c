-- Stores one record the ingester wrote, in the transaction of its chat write.
INSERT INTO ingest.records (natural_key, kind, repository, channel_id, thread_id, message_id, merge_commit, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
