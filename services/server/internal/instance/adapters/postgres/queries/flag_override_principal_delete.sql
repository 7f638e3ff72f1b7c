-- Removes the override of flag $1 for principal $2.
DELETE FROM instance.feature_flag_overrides
WHERE flag_key = $1 AND principal_id = $2
