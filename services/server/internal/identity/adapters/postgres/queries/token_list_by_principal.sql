-- A page of a principal's tokens after a token id, in id (issue) order, on tokens_principal.
SELECT t.id, t.principal_id, t.device_id, d.name, d.status, t.scopes, t.created_at,
       t.expires_at, t.revoked_at, t.last_used_at
FROM identity.tokens t
LEFT JOIN identity.devices d ON d.id = t.device_id
WHERE t.principal_id = $1 AND t.id > $2
ORDER BY t.id
LIMIT $3
