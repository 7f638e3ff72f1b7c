-- One principal by id.
SELECT id, kind, display_name, handle, email, scopes, created_at, deactivated_at
FROM identity.principals
WHERE id = $1
