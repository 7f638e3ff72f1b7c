-- Deactivates a principal at $2, or reactivates it when $2 is NULL, unless it is in that state
-- already. One row when the principal exists: true when this statement changed it.
WITH changed AS (
    UPDATE identity.principals
    SET deactivated_at = $2
    WHERE id = $1 AND (deactivated_at IS NULL) <> ($2::timestamptz IS NULL)
    RETURNING id
)
SELECT EXISTS (SELECT 1 FROM changed)
FROM identity.principals
WHERE id = $1
