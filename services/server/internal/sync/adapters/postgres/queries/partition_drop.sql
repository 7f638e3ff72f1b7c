-- Drops one time partition with all its events (the quoted name is formatted in).
DROP TABLE %s
