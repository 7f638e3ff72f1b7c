-- Every flag, ordered by key, with the overrides that apply to one actor: the override of its
-- principal kind ($1) and the override of its principal ($2). Each override is null when absent.
SELECT f.key, f.default_enabled, k.enabled, p.enabled
FROM instance.feature_flags f
LEFT JOIN instance.feature_flag_overrides k
       ON k.flag_key = f.key AND k.principal_kind = $1
LEFT JOIN instance.feature_flag_overrides p
       ON p.flag_key = f.key AND p.principal_id = $2
ORDER BY f.key
