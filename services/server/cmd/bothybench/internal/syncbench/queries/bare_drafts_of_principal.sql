-- The snapshot's baseline: every draft of the actor, as sync's personal store reads them.
SELECT principal_id, channel_id, thread_id, content_md, version, updated_at
FROM sync.drafts
WHERE principal_id = $1
ORDER BY channel_id, thread_id NULLS FIRST
