-- Revokes a token; a revoked token keeps its first revocation time. Returns the id when the
-- token exists.
UPDATE identity.tokens
SET revoked_at = COALESCE(revoked_at, $2)
WHERE id = $1
RETURNING id
