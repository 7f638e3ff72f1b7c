-- One device by id.
SELECT id, principal_id, name, status, created_at
FROM identity.devices
WHERE id = $1
