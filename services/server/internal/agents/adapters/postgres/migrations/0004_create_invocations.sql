-- Invocations (spec 02, ADR 0031): a person asked an agent something, by @mentioning it or by
-- writing in a direct message with it. The row is inserted in the transaction of the message
-- that caused it. agent_id, message_id, thread_id, channel_id, space_id, invoked_by and
-- reply_message_id are not foreign keys: they name rows of other schemas (identity, chat), and
-- no foreign key crosses a schema.
CREATE TABLE agents.invocations (
    id               uuid        PRIMARY KEY,
    agent_id         uuid        NOT NULL,
    message_id       uuid        NOT NULL,
    thread_id        uuid        NOT NULL,
    channel_id       uuid        NOT NULL,
    space_id         uuid,
    invoked_by       uuid        NOT NULL,
    reason           text        NOT NULL CHECK (reason IN ('mention', 'direct_message')),
    -- How many times invocation.requested was appended for it: 1 at creation, one more per
    -- redelivery, at most agents.invocation_max_deliveries (checked by the sweeper).
    attempt          integer     NOT NULL CHECK (attempt >= 1),
    state            text        NOT NULL CHECK (state IN ('pending', 'acknowledged', 'answered', 'failed')),
    created_at       timestamptz NOT NULL,
    -- When the last invocation.requested was appended; the sweeper redelivers a pending
    -- invocation once it is older than agents.invocation_ack_timeout.
    delivered_at     timestamptz NOT NULL CHECK (delivered_at >= created_at),
    updated_at       timestamptz NOT NULL CHECK (updated_at >= created_at),
    -- The reply that answered it (a message posted with its invocation_token).
    reply_message_id uuid,
    CHECK ((reply_message_id IS NOT NULL) = (state = 'answered')),
    -- One invocation per agent and message: a message mentioning an agent twice asks once.
    UNIQUE (message_id, agent_id)
);

-- The sweeper reads the pending invocations, a small part of all of them, oldest delivery first.
CREATE INDEX invocations_pending ON agents.invocations (delivered_at, id) WHERE state = 'pending';

-- The key invocation tokens are derived from (HMAC-SHA-256 of the invocation id): one row,
-- made here from PostgreSQL's strong random source, so every process of the instance derives the
-- same token and a backup restores it with the invocations.
CREATE TABLE agents.invocation_key (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    key      bytea   NOT NULL CHECK (length(key) >= 32)
);

INSERT INTO agents.invocation_key (key)
VALUES (uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()));
