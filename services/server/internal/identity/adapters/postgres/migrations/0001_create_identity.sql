-- The identity module (spec 02, identity): principals, their devices and their bearer tokens.
-- Rows are written by the identity use cases only; other modules name principals by id and
-- read them through the Directory port.
CREATE SCHEMA IF NOT EXISTS identity;

CREATE TABLE identity.principals (
    id             uuid        PRIMARY KEY,
    kind           text        NOT NULL CHECK (kind IN ('person', 'agent', 'app')),
    display_name   text        NOT NULL CHECK (display_name <> ''),
    -- Stored in lower case, so the unique index below compares handles case-insensitively.
    -- The pattern is checked under the C collation: ASCII ranges whatever the database's.
    handle         text        NOT NULL
        CHECK ((handle COLLATE "C") ~ '^[a-z0-9][a-z0-9_.-]{0,30}[a-z0-9]$'),
    -- People only.
    email          text        CHECK ((email IS NOT NULL) = (kind = 'person')),
    -- Apps only: the scopes every token issued to the app carries.
    scopes         text[]      CHECK ((scopes IS NOT NULL) = (kind = 'app')),
    created_at     timestamptz NOT NULL,
    -- Set when the principal is deactivated; its tokens then no longer authenticate.
    deactivated_at timestamptz
);

CREATE UNIQUE INDEX principals_handle ON identity.principals (handle);

CREATE TABLE identity.devices (
    id           uuid        PRIMARY KEY,
    principal_id uuid        NOT NULL REFERENCES identity.principals (id),
    name         text        NOT NULL CHECK (name <> ''),
    status       text        NOT NULL CHECK (status IN ('pending', 'approved', 'revoked')),
    created_at   timestamptz NOT NULL,
    -- The target of the tokens' composite key: a token's device belongs to its principal.
    UNIQUE (id, principal_id)
);

CREATE INDEX devices_principal ON identity.devices (principal_id);

CREATE TABLE identity.tokens (
    id           uuid        PRIMARY KEY,
    principal_id uuid        NOT NULL REFERENCES identity.principals (id),
    device_id    uuid,
    -- SHA-256 of the secret; the secret itself is never stored. Authentication looks a token
    -- up by this column through the unique index below.
    token_hash   bytea       NOT NULL CHECK (octet_length(token_hash) = 32),
    -- An app token's scopes, copied from the app at issue; NULL for people and agents.
    scopes       text[],
    created_at   timestamptz NOT NULL,
    -- NULL: the token never expires (identity.token_ttl 0 at issue).
    expires_at   timestamptz CHECK (expires_at > created_at),
    revoked_at   timestamptz,
    -- Written in batches (identity.last_used_flush_interval), never per request.
    last_used_at timestamptz,
    FOREIGN KEY (device_id, principal_id) REFERENCES identity.devices (id, principal_id)
);

CREATE UNIQUE INDEX tokens_token_hash ON identity.tokens (token_hash);
CREATE INDEX tokens_principal ON identity.tokens (principal_id);
CREATE INDEX tokens_device ON identity.tokens (device_id) WHERE device_id IS NOT NULL;
