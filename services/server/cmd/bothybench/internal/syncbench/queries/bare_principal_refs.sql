-- The snapshot's baseline: the PrincipalRefs of a batch of ids (the actor, then the agents), as
-- identity's Directory reads them.
SELECT id, kind, display_name, handle
FROM identity.principals
WHERE id = ANY ($1::uuid[])
