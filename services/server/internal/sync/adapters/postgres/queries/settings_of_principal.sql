-- Every setting of one principal, by key in byte order (the same in every locale).
SELECT principal_id, key, value, version
FROM sync.user_settings
WHERE principal_id = $1
ORDER BY key COLLATE "C"
