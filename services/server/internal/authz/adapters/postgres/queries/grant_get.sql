-- One grant by id.
SELECT id, principal_id, resource_kind, resource_id, role, created_at, created_by
FROM authz.grants
WHERE id = $1
