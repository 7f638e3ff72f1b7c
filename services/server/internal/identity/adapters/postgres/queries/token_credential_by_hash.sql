-- The token with this hash (an index probe on tokens_token_hash), with what authentication
-- checks of its principal and device.
SELECT t.id, t.principal_id, p.kind, t.scopes, t.expires_at, t.revoked_at, p.deactivated_at,
       t.device_id, d.status
FROM identity.tokens t
JOIN identity.principals p ON p.id = t.principal_id
LEFT JOIN identity.devices d ON d.id = t.device_id
WHERE t.token_hash = $1
