-- Every override of every flag ($1 = '') or of one flag ($1), in the order Flag.Overrides
-- promises: by flag, kind overrides first (person, agent, app), then principal overrides by id.
SELECT flag_key, principal_kind, principal_id, enabled
FROM instance.feature_flag_overrides
WHERE $1::text = '' OR flag_key = $1
ORDER BY flag_key,
         principal_id IS NOT NULL,
         array_position(ARRAY['person', 'agent', 'app'], principal_kind),
         principal_id
