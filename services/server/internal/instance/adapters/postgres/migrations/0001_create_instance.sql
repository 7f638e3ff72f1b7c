-- The instance itself: exactly one row (spec 02), created by Setup.Ensure after the migrations.
CREATE SCHEMA IF NOT EXISTS instance;

CREATE TABLE instance.instance (
    id          uuid        PRIMARY KEY,
    name        text        NOT NULL CHECK (name <> ''),
    -- Changes only when the database is restored from a backup; cursors of another epoch are
    -- invalid.
    sync_epoch  uuid        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- Increases on every change of the row (getInstance reports it).
    version     bigint      NOT NULL DEFAULT 1 CHECK (version >= 1)
);

-- At most one row: every row has the same key (true), so a second INSERT conflicts.
CREATE UNIQUE INDEX instance_single_row ON instance.instance ((true));
