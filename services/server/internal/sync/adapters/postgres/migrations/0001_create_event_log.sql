-- The event log (spec 02, sync.event_log): every durable event, in the commit order its seq
-- gives. Rows are written only by the appender's commit-phase hook, which takes the seqs from
-- the event_seq counter, so seqs are gap-free and commit-ordered; later changes are only
-- redactions (redacted_at, payload reduced to ids) and retention, which drops whole partitions.
CREATE SCHEMA IF NOT EXISTS sync;

CREATE TABLE sync.event_log (
    seq                   bigint      NOT NULL CHECK (seq >= 1),
    id                    uuid        NOT NULL,
    type                  text        NOT NULL,
    -- clock_timestamp() taken right after the event_seq advance, so it rises with seq as long
    -- as the database server's clock does; the partition key.
    occurred_at           timestamptz NOT NULL,
    actor_id              uuid        NOT NULL,
    space_id              uuid,
    channel_id            uuid,
    thread_id             uuid,
    resource_kind         text        NOT NULL,
    resource_id           uuid        NOT NULL,
    -- The one receiver of a personal event; NULL for every other event.
    audience_principal_id uuid,
    -- The action a receiver needs (spec 04) for a non-personal event; NULL for a personal one.
    receive_action        text,
    payload               jsonb       NOT NULL CHECK (jsonb_typeof(payload) = 'object'),
    redacted_at           timestamptz,
    correlation_id        text,
    trace_context         jsonb       CHECK (jsonb_typeof(trace_context) = 'object'),
    -- A partitioned table's keys must contain the partition key; seq alone is unique because
    -- the counter hands every seq out once.
    PRIMARY KEY (seq, occurred_at),
    CHECK ((audience_principal_id IS NULL) <> (receive_action IS NULL))
) PARTITION BY RANGE (occurred_at);

-- Redaction finds every event of one resource.
CREATE INDEX event_log_resource ON sync.event_log (resource_kind, resource_id);

-- Catches every row no time partition covers (partition upkeep has not run yet, or the clock
-- jumped), so an append never fails for want of a partition. Upkeep moves its rows into the
-- time partitions it creates; it is normally empty.
CREATE TABLE sync.event_log_default PARTITION OF sync.event_log DEFAULT;

-- The time partitions partition upkeep created and has not dropped yet, with their bounds
-- (the catalog keeps bounds only as text). Partitions are named after their start.
CREATE TABLE sync.event_log_partitions (
    name        text        PRIMARY KEY,
    range_start timestamptz NOT NULL,
    range_end   timestamptz NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CHECK (range_end > range_start)
);

-- The retention horizon: the highest seq retention ever dropped. MinRetainedSeq never goes
-- below dropped_through_seq + 1, even when the log is empty or a clock that went backwards
-- left a lower seq in a newer partition. Exactly one row.
CREATE TABLE sync.event_log_horizon (
    only_row            boolean     PRIMARY KEY DEFAULT true CHECK (only_row),
    dropped_through_seq bigint      NOT NULL DEFAULT 0 CHECK (dropped_through_seq >= 0),
    updated_at          timestamptz NOT NULL DEFAULT now()
);

INSERT INTO sync.event_log_horizon DEFAULT VALUES;
