-- Principals by id, locked until the end of the transaction in id order, so that two
-- transactions locking overlapping sets wait instead of deadlocking (deactivation locks the
-- owners before it counts the active ones).
SELECT id, kind, display_name, handle, email, scopes, created_at, deactivated_at
FROM identity.principals
WHERE id = ANY ($1::uuid[])
ORDER BY id
FOR UPDATE
