-- Feature flags (spec 02): a default per flag, and overrides per principal kind and per
-- principal. Flags.Evaluate reads both tables in one query; FlagAdmin writes them and appends
-- flags.updated in the same transaction.
CREATE SCHEMA IF NOT EXISTS instance;

CREATE TABLE instance.feature_flags (
    -- The same syntax the domain checks (instance/domain.KeyProblem), kept here too so that a
    -- row written by hand cannot break clients.
    key             text        PRIMARY KEY CHECK (key ~ '^[a-z][a-z0-9._-]*$' AND length(key) <= 64),
    description     text        NOT NULL DEFAULT '' CHECK (char_length(description) <= 500),
    default_enabled boolean     NOT NULL,
    -- Increases on every change of the flag or of one of its overrides.
    version         bigint      NOT NULL DEFAULT 1 CHECK (version >= 1),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- One override sets a flag's value for every principal of one kind (principal_kind) or for one
-- principal (principal_id); exactly one of the two is set. principal_id is not a foreign key:
-- principals live in the identity schema, and no foreign key crosses a schema.
CREATE TABLE instance.feature_flag_overrides (
    flag_key        text        NOT NULL REFERENCES instance.feature_flags (key) ON DELETE CASCADE,
    principal_kind  text        CHECK (principal_kind IN ('person', 'agent', 'app')),
    principal_id    uuid,
    enabled         boolean     NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CHECK (num_nonnulls(principal_kind, principal_id) = 1)
);

-- At most one override per flag and target; these also serve Evaluate's two lookups.
CREATE UNIQUE INDEX feature_flag_overrides_kind
    ON instance.feature_flag_overrides (flag_key, principal_kind)
    WHERE principal_kind IS NOT NULL;
CREATE UNIQUE INDEX feature_flag_overrides_principal
    ON instance.feature_flag_overrides (flag_key, principal_id)
    WHERE principal_id IS NOT NULL;
