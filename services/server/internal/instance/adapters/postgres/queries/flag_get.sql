-- One flag by key.
SELECT key, description, default_enabled, version, created_at, updated_at
FROM instance.feature_flags
WHERE key = $1
