-- The bare baseline's counter step: the same row lock and increment as the appender's, with
-- nothing else (no transaction-local setting).
UPDATE instance.sequence_counters
SET value = value + $1
WHERE name = 'event_seq'
RETURNING value
