-- The PrincipalRefs of the active principals with a batch of handles (stored, lower-case
-- forms), in one query: mentions name active principals only.
SELECT id, kind, display_name, handle
FROM identity.principals
WHERE handle = ANY ($1::text[])
  AND deactivated_at IS NULL
