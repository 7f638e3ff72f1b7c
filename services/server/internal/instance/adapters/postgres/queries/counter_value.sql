-- The committed value of one counter ($1: event_seq or permission_version), read without a lock.
SELECT value
FROM instance.sequence_counters
WHERE name = $1
