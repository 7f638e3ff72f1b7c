-- Forgets one consumer of a principal.
DELETE FROM sync.consumers WHERE principal_id = $1 AND name = $2
