-- Saves a draft ($3 NULL: the channel's own draft): a new row with version 1, or the existing
-- row with its text replaced and its version raised by one, returned as stored.
INSERT INTO sync.drafts AS d (principal_id, channel_id, thread_id, content_md, version, updated_at)
VALUES ($1, $2, $3, $4, 1, $5)
ON CONFLICT ON CONSTRAINT drafts_key DO UPDATE
SET content_md = EXCLUDED.content_md,
    version = d.version + 1,
    updated_at = EXCLUDED.updated_at
RETURNING principal_id, channel_id, thread_id, content_md, version, updated_at
