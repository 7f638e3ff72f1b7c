-- Removes one grant and returns what it was.
DELETE FROM authz.grants
WHERE id = $1
RETURNING id, principal_id, resource_kind, resource_id, role, created_at, created_by
