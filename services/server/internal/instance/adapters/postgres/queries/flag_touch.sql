-- Records a change of one flag's overrides on the flag: version + 1, updated_at now.
UPDATE instance.feature_flags
SET version = version + 1,
    updated_at = now()
WHERE key = $1
