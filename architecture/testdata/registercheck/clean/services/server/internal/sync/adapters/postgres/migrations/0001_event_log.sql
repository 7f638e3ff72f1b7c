CREATE TABLE IF NOT EXISTS sync.event_log (
    seq bigint NOT NULL,
    type text NOT NULL,
    receive_action text NOT NULL,
    occurred_at timestamptz NOT NULL
) PARTITION BY RANGE (occurred_at);
CREATE TABLE sync.event_log_default PARTITION OF sync.event_log DEFAULT;
