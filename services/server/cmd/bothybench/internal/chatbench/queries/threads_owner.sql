-- The thread list case's owner when an earlier case bootstrapped the instance: the principal
-- of the oldest owner grant on the instance.
SELECT principal_id
FROM authz.grants
WHERE resource_kind = 'instance'
  AND role = 'owner'
ORDER BY created_at, id
LIMIT 1
