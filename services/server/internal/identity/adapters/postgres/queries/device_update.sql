-- Stores a device's changed status (the only field that changes).
UPDATE identity.devices
SET status = $2
WHERE id = $1
