-- Creates a flag, or changes the description and default of an existing one (version + 1).
-- Returns a row only when it wrote one: an existing flag with exactly these values is left
-- alone, so repeating a definition changes nothing and appends no event.
INSERT INTO instance.feature_flags AS f (key, description, default_enabled)
VALUES ($1, $2, $3)
ON CONFLICT (key) DO UPDATE
SET description     = EXCLUDED.description,
    default_enabled = EXCLUDED.default_enabled,
    version         = f.version + 1,
    updated_at      = now()
WHERE (f.description, f.default_enabled) IS DISTINCT FROM (EXCLUDED.description, EXCLUDED.default_enabled)
RETURNING key
