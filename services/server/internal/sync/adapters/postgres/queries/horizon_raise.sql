-- Raises the retention horizon to $1 when that is higher (it never goes down) and returns it.
UPDATE sync.event_log_horizon
SET dropped_through_seq = greatest(dropped_through_seq, $1),
    updated_at = now()
RETURNING dropped_through_seq
