-- Durable consumers (spec 03, "Durable consumers", ADR 0026): a named cursor per agent or app
-- that the server keeps. acked_seq only grows (the ack is one UPDATE ... GREATEST under the
-- row's lock); sync_epoch is the epoch the consumer was created in, against which catch-up
-- checks it. Principals live in identity's schema, so there is no foreign key (spec 02).
CREATE TABLE sync.consumers (
    principal_id uuid        NOT NULL,
    name         text        NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9_.-]*$'),
    acked_seq    bigint      NOT NULL CHECK (acked_seq >= 0),
    sync_epoch   uuid        NOT NULL,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (principal_id, name)
);
