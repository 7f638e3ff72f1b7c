-- Every flag, ordered by key (its overrides come from flag_override_list.sql).
SELECT key, description, default_enabled, version, created_at, updated_at
FROM instance.feature_flags
ORDER BY key
