-- Removes a flag; its overrides go with it (ON DELETE CASCADE).
DELETE FROM instance.feature_flags
WHERE key = $1
