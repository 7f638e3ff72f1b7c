-- The PrincipalRefs of a batch of ids, in one query.
SELECT id, kind, display_name, handle
FROM identity.principals
WHERE id = ANY ($1::uuid[])
