-- Revokes a token unless it is revoked already (a revoked token keeps its first revocation
-- time). One row when the token exists: true when this statement revoked it.
WITH revoked AS (
    UPDATE identity.tokens
    SET revoked_at = $2
    WHERE id = $1 AND revoked_at IS NULL
    RETURNING id
)
SELECT EXISTS (SELECT 1 FROM revoked)
FROM identity.tokens
WHERE id = $1
