-- Stores a new token: its hash, never its secret.
INSERT INTO identity.tokens (id, principal_id, device_id, token_hash, scopes, created_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
