-- One device by id, locked until the end of the transaction, for a status change.
SELECT id, principal_id, name, status, created_at
FROM identity.devices
WHERE id = $1
FOR UPDATE
