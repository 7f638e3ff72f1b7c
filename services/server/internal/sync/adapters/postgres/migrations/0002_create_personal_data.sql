-- The personal data of each principal (spec 02): read states, drafts, settings and the sidebar.
-- Every row is written only by its owner's own requests; each write raises the row's version by
-- one (a new row starts at 1) and appends the matching personal event in the same transaction.
-- Principals, threads and channels live in other schemas, so there are no foreign keys (spec
-- 02); the snapshot drops what its reader can no longer read.

-- How far each principal has read each thread. channel_id is the thread's channel, so that the
-- snapshot can drop read states of channels the reader cannot read without asking chat.
CREATE TABLE sync.read_states (
    principal_id  uuid        NOT NULL,
    thread_id     uuid        NOT NULL,
    channel_id    uuid        NOT NULL,
    last_read_seq bigint      NOT NULL CHECK (last_read_seq >= 0),
    version       bigint      NOT NULL CHECK (version >= 1),
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (principal_id, thread_id)
);

-- Unsent messages: one per principal and channel (thread_id NULL, a new thread) and one per
-- principal and thread of the channel. NULLS NOT DISTINCT (PostgreSQL 15) makes the channel's
-- own draft unique too, and lets the upsert name the constraint.
CREATE TABLE sync.drafts (
    principal_id uuid        NOT NULL,
    channel_id   uuid        NOT NULL,
    thread_id    uuid,
    content_md   text        NOT NULL CHECK (content_md <> ''),
    version      bigint      NOT NULL CHECK (version >= 1),
    updated_at   timestamptz NOT NULL,
    CONSTRAINT drafts_key UNIQUE NULLS NOT DISTINCT (principal_id, channel_id, thread_id)
);

-- Named preferences whose meaning only clients know; the key rule is domain.SettingKeyPattern.
CREATE TABLE sync.user_settings (
    principal_id uuid        NOT NULL,
    key          text        NOT NULL CHECK (key ~ '^[a-z][a-z0-9_.-]{0,63}$'),
    value        jsonb       NOT NULL CHECK (jsonb_typeof(value) <> 'null'),
    version      bigint      NOT NULL CHECK (version >= 1),
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (principal_id, key)
);

-- Each principal's sidebar: the ordered sections, each an object {key, title, collapsed,
-- channel_ids}, replaced whole by every write.
CREATE TABLE sync.sidebar (
    principal_id uuid        PRIMARY KEY,
    sections     jsonb       NOT NULL CHECK (jsonb_typeof(sections) = 'array'),
    version      bigint      NOT NULL CHECK (version >= 1),
    updated_at   timestamptz NOT NULL
);
