-- Sets the override of flag $1 for principal $2 to $3. Affects no row when it already has that
-- value.
INSERT INTO instance.feature_flag_overrides AS o (flag_key, principal_id, enabled)
VALUES ($1, $2, $3)
ON CONFLICT (flag_key, principal_id) WHERE principal_id IS NOT NULL DO UPDATE
SET enabled = EXCLUDED.enabled
WHERE o.enabled <> EXCLUDED.enabled
