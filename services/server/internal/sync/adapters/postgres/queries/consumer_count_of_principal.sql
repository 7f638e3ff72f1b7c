-- How many consumers the principal holds.
SELECT count(*) FROM sync.consumers WHERE principal_id = $1
