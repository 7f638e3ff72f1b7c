-- Stores a new principal; a taken handle violates principals_handle (23505).
INSERT INTO identity.principals (id, kind, display_name, handle, email, scopes, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
