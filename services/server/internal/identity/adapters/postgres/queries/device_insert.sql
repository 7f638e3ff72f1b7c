-- Stores a new device of a principal.
INSERT INTO identity.devices (id, principal_id, name, status, created_at)
VALUES ($1, $2, $3, $4, $5)
