-- Stores a setting: a new row with version 1, or the existing row with its value replaced and
-- its version raised by one, returned as stored.
INSERT INTO sync.user_settings AS s (principal_id, key, value, version, updated_at)
VALUES ($1, $2, $3, 1, $4)
ON CONFLICT (principal_id, key) DO UPDATE
SET value = EXCLUDED.value,
    version = s.version + 1,
    updated_at = EXCLUDED.updated_at
RETURNING principal_id, key, value, version
