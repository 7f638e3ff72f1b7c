-- Who can read one channel by their grants: the holders of a grant on the instance (when $1
-- is true: a standard channel), on the channel's space $2 and on the channel $3, each with the
-- highest role of those grants, one page in principal id order after $4 (NULL: from the
-- start), at most $5 rows. Index grants_resource (resource_kind, resource_id).
SELECT principal_id,
       (array_agg(role ORDER BY CASE role
                                    WHEN 'owner' THEN 4
                                    WHEN 'admin' THEN 3
                                    WHEN 'member' THEN 2
                                    ELSE 1
                                END DESC))[1] AS role
FROM authz.grants
WHERE ((resource_kind = 'instance' AND $1::boolean)
    OR (resource_kind = 'space' AND resource_id = $2::uuid)
    OR (resource_kind = 'channel' AND resource_id = $3::uuid))
  AND ($4::uuid IS NULL OR principal_id > $4::uuid)
GROUP BY principal_id
ORDER BY principal_id
LIMIT $5
