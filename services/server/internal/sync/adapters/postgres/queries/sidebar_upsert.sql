-- Replaces a principal's sidebar: a new row with version 1, or the existing row with its
-- sections replaced and its version raised by one, returned as stored.
INSERT INTO sync.sidebar AS b (principal_id, sections, version, updated_at)
VALUES ($1, $2, 1, $3)
ON CONFLICT (principal_id) DO UPDATE
SET sections = EXCLUDED.sections,
    version = b.version + 1,
    updated_at = EXCLUDED.updated_at
RETURNING principal_id, sections, version
