-- Every draft of one principal, by channel, the channel's own draft first, then by thread.
SELECT principal_id, channel_id, thread_id, content_md, version, updated_at
FROM sync.drafts
WHERE principal_id = $1
ORDER BY channel_id, thread_id NULLS FIRST
