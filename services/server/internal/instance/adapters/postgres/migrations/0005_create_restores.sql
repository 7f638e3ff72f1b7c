-- Every rotation of the sync epoch (spec 06, ADR 0021): a restore by bothy admin restore, or a
-- restore behind bothy's back that a process detected at its start. The row is the record of
-- when the log was set back, to what, and which epoch every older cursor belonged to.
CREATE SCHEMA IF NOT EXISTS instance;

CREATE TABLE instance.restores (
    id              uuid        PRIMARY KEY,
    restored_at     timestamptz NOT NULL,
    -- restore: bothy admin restore; detected: the start-up check found the log set back.
    how             text        NOT NULL CHECK (how IN ('restore', 'detected')),
    -- The backup file restored, or what the start-up check saw.
    source          text        NOT NULL CHECK (char_length(source) <= 4096),
    -- When the backup was taken (pg_dump's archive header); NULL when unknown.
    backup_taken_at timestamptz,
    -- The head of the log (the event_seq counter) as the restore left it.
    head_seq        bigint      NOT NULL CHECK (head_seq >= 0),
    old_epoch       uuid        NOT NULL,
    new_epoch       uuid        NOT NULL CHECK (new_epoch <> old_epoch)
);

CREATE INDEX restores_restored_at ON instance.restores (restored_at);
