-- Idempotency keys (ADR 0013): the response of a successful POST that carried an
-- Idempotency-Key, kept per actor and key for http.idempotency_ttl so that a retry gets it again
-- instead of writing twice. The HTTP edge (kernel/httpmw) claims a row in the transaction that
-- runs the handler and stores the response in it, so both commit together. Expired rows are
-- deleted by the maintenance role and `bothy maintain`.
CREATE SCHEMA IF NOT EXISTS instance;

CREATE TABLE instance.idempotency_keys (
    -- The principal that sent the request; no foreign key, principals live in identity.
    actor_id     uuid        NOT NULL,
    -- 1 to 255 printable ASCII characters without space, as the middleware accepts; the range
    -- is checked under the C collation, so it means the ASCII codes whatever the database's.
    key          text        NOT NULL CHECK (octet_length(key) BETWEEN 1 AND 255 AND (key COLLATE "C") !~ '[^!-~]'),
    -- SHA-256 of the request's method, path with query and body: the same key with another
    -- request is a conflict.
    fingerprint  bytea       NOT NULL CHECK (octet_length(fingerprint) = 32),
    -- 0 while the claiming transaction runs; a committed row always holds a 2xx.
    status       integer     NOT NULL DEFAULT 0 CHECK (status = 0 OR status BETWEEN 200 AND 299),
    content_type text        NOT NULL DEFAULT '',
    location     text        NOT NULL DEFAULT '',
    body         bytea       NOT NULL DEFAULT '',
    -- When the key was claimed (the application's clock); it expires http.idempotency_ttl later.
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (actor_id, key)
);

-- The purge of expired keys deletes by age.
CREATE INDEX idempotency_keys_created_at ON instance.idempotency_keys (created_at);
