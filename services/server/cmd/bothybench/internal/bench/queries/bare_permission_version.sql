-- The per-request baseline of authorize: the one round trip it cannot avoid, the read of the
-- permission_version counter a cached Scope is checked against (the statement instance.Versions
-- runs; $1 is 'permission_version'). The snapshot's baseline reads 'event_seq' with it too.
SELECT value
FROM instance.sequence_counters
WHERE name = $1
