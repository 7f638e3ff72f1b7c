-- Creates the instance row unless one exists; the single-row index makes a concurrent second
-- insert wait for the first and then do nothing.
INSERT INTO instance.instance (id, name, sync_epoch)
VALUES ($1, $2, $3)
ON CONFLICT DO NOTHING
