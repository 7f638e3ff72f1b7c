-- The PrincipalRefs of the active principals of a batch of ids, in one query: a deactivated
-- principal reads no channel, so listChannelMembers leaves it out.
SELECT id, kind, display_name, handle
FROM identity.principals
WHERE id = ANY ($1::uuid[])
  AND deactivated_at IS NULL
