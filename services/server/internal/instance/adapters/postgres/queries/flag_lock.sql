-- Locks one flag's row until the transaction ends, so its overrides change only while it exists.
SELECT key
FROM instance.feature_flags
WHERE key = $1
FOR UPDATE
