-- At most $3 principals with a handle above $2 ('' from the start), in handle order, whose
-- handle or display name starts with $1 compared in lower case ('' keeps every principal),
-- deactivated ones only when $4. Handles are stored in lower case; the unique index on
-- handle gives the order.
SELECT id, kind, display_name, handle, email, scopes, created_at, deactivated_at
FROM identity.principals
WHERE handle > $2
  AND ($1 = '' OR starts_with(handle, lower($1)) OR starts_with(lower(display_name), lower($1)))
  AND ($4::boolean OR deactivated_at IS NULL)
ORDER BY handle
LIMIT $3
