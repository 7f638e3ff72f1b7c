-- Deletes a draft ($3 NULL: the channel's own draft) and returns it as it was; no row when
-- there was none.
DELETE FROM sync.drafts
WHERE principal_id = $1
  AND channel_id = $2
  AND thread_id IS NOT DISTINCT FROM $3::uuid
RETURNING principal_id, channel_id, thread_id, content_md, version, updated_at
