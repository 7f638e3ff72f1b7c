-- The cursors of one repository, one per section that has one.
SELECT repository, section, channel_id, position, updated_at
FROM ingest.cursors
WHERE repository = $1
ORDER BY section
