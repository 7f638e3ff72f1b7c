-- The snapshot's baseline: every feature flag with the overrides of the actor's kind ($1) and
-- of the actor ($2), as instance.Flags evaluates them.
SELECT f.key, f.default_enabled, k.enabled, p.enabled
FROM instance.feature_flags f
LEFT JOIN instance.feature_flag_overrides k
       ON k.flag_key = f.key AND k.principal_kind = $1
LEFT JOIN instance.feature_flag_overrides p
       ON p.flag_key = f.key AND p.principal_id = $2
ORDER BY f.key
