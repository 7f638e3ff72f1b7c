-- One draft of one principal ($3 NULL: the channel's own draft); no row when there is none
-- (index drafts_key on its first two columns).
SELECT principal_id, channel_id, thread_id, content_md, version, updated_at
FROM sync.drafts
WHERE principal_id = $1
  AND channel_id = $2
  AND thread_id IS NOT DISTINCT FROM $3::uuid
