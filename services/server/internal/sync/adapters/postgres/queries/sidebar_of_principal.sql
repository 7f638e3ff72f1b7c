-- The sidebar of one principal; no row when it never stored one.
SELECT principal_id, sections, version
FROM sync.sidebar
WHERE principal_id = $1
