-- Stores one grant; the unique constraint grants_one_per_resource refuses a second grant of the
-- principal on the resource (SQLSTATE 23505).
INSERT INTO authz.grants (id, principal_id, resource_kind, resource_id, role, created_by)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING created_at
