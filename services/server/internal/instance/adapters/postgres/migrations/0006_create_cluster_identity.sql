-- The PostgreSQL cluster this database last ran on (spec 06, ADR 0021): its system identifier
-- (new with every initdb) and its timeline (new with every point-in-time recovery and every
-- promotion of a replica). It travels inside the database, so a database restored into another
-- cluster, or recovered to an earlier point, carries an identity that no longer matches the
-- cluster it runs on: bothy serve detects that at its start and rotates the sync epoch.
CREATE SCHEMA IF NOT EXISTS instance;

CREATE TABLE instance.cluster_identity (
    -- At most one row.
    singleton         boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
    system_identifier text        NOT NULL,
    timeline_id       bigint      NOT NULL,
    seen_at           timestamptz NOT NULL
);
