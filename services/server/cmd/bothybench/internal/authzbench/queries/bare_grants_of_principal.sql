-- The Scope build's baseline: the bare grant query, every grant of one principal, the same
-- statement the authz store runs (index grants_one_per_resource), scanned with nothing built.
SELECT id, principal_id, resource_kind, resource_id, role, created_at, created_by
FROM authz.grants
WHERE principal_id = $1
ORDER BY id
