-- The commit-ordered counters (spec 02, the counter-row pattern). A row is advanced only as the
-- last step of a transaction (the commit phase), so its row lock is held only until COMMIT and
-- transactions receive their values in commit order.
CREATE SCHEMA IF NOT EXISTS instance;

CREATE TABLE instance.sequence_counters (
    name   text   PRIMARY KEY CHECK (name IN ('event_seq', 'permission_version')),
    value  bigint NOT NULL CHECK (value >= 0)
);

INSERT INTO instance.sequence_counters (name, value) VALUES
    ('event_seq', 0),
    ('permission_version', 0);
