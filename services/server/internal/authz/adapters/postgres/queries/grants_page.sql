-- A page of grants in id order after a cursor, of one principal or (for a NULL principal) of
-- everyone.
SELECT id, principal_id, resource_kind, resource_id, role, created_at, created_by
FROM authz.grants
WHERE ($1::uuid IS NULL OR principal_id = $1)
  AND ($2::uuid IS NULL OR id > $2)
ORDER BY id
LIMIT $3
