-- Agent runs (spec 02, ADR 0027): an agent's work in a thread on behalf of a person. The
-- thread's channel and space are recorded with the run, so that every read is authorized on
-- the thread without reading the chat schema. agent_id, thread_id, channel_id, space_id,
-- requested_by, invocation_id and cancelled_by are not foreign keys: they name rows of other
-- schemas (identity, chat) or of a table not built yet (invocations), and no foreign key
-- crosses a schema.
CREATE TABLE agents.runs (
    id            uuid        PRIMARY KEY,
    agent_id      uuid        NOT NULL,
    thread_id     uuid        NOT NULL,
    channel_id    uuid        NOT NULL,
    space_id      uuid,
    requested_by  uuid        NOT NULL,
    invocation_id uuid,
    state         text        NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    -- Bounded by agents.run_progress_max_length, which the use case checks; no database limit,
    -- so that the key may grow without a migration.
    progress      text        NOT NULL DEFAULT '',
    version       bigint      NOT NULL CHECK (version >= 1),
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL CHECK (updated_at >= created_at),
    ended_at      timestamptz,
    cancelled_by  uuid,
    -- A run has ended exactly when its state is final, and only a cancelled run names who
    -- cancelled it.
    CHECK ((ended_at IS NOT NULL) = (state IN ('succeeded', 'failed', 'cancelled'))),
    CHECK (cancelled_by IS NULL OR state = 'cancelled')
);

-- The snapshot's active_runs reads the runs in progress, a small part of all runs.
CREATE INDEX runs_in_progress ON agents.runs (created_at, id) WHERE state IN ('queued', 'running');
