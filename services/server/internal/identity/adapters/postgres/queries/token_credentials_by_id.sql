-- The tokens with these ids (primary key probes), with what authentication checks of their
-- principal and device: the gateway's batched recheck of its open sessions' credentials.
SELECT t.id, t.principal_id, p.kind, t.scopes, t.expires_at, t.revoked_at, p.deactivated_at,
       t.device_id, d.status
FROM identity.tokens t
JOIN identity.principals p ON p.id = t.principal_id
LEFT JOIN identity.devices d ON d.id = t.device_id
WHERE t.id = ANY($1::uuid[])
