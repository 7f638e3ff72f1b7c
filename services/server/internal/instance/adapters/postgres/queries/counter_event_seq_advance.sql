-- Advances event_seq by $1 (locking its row until COMMIT) and returns the new value, the last seq
-- handed out. set_config(..., true) also publishes it as the transaction-local setting
-- bothy.event_seq, which statements later in the same batch read with current_setting().
UPDATE instance.sequence_counters
SET value = value + $1
WHERE name = 'event_seq'
RETURNING set_config('bothy.event_seq', value::text, true)::bigint
