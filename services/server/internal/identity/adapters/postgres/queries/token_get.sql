-- One token by id, with its device's name and status; never a secret (none is stored).
SELECT t.id, t.principal_id, t.device_id, d.name, d.status, t.scopes, t.created_at,
       t.expires_at, t.revoked_at, t.last_used_at
FROM identity.tokens t
LEFT JOIN identity.devices d ON d.id = t.device_id
WHERE t.id = $1
