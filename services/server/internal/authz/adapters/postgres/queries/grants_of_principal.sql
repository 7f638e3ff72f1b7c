-- Every grant of one principal, the input of its Scope (index grants_one_per_resource).
SELECT id, principal_id, resource_kind, resource_id, role, created_at, created_by
FROM authz.grants
WHERE principal_id = $1
ORDER BY id
