-- Writes the cursor of a repository's section, replacing the one there.
INSERT INTO ingest.cursors (repository, section, channel_id, position, updated_at)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (repository, section) DO UPDATE
SET channel_id = excluded.channel_id, position = excluded.position, updated_at = excluded.updated_at
