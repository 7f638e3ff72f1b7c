-- Sets the override of flag $1 for principal kind $2 to $3. Affects no row when it already has
-- that value.
INSERT INTO instance.feature_flag_overrides AS o (flag_key, principal_kind, enabled)
VALUES ($1, $2, $3)
ON CONFLICT (flag_key, principal_kind) WHERE principal_kind IS NOT NULL DO UPDATE
SET enabled = EXCLUDED.enabled
WHERE o.enabled <> EXCLUDED.enabled
