-- The chat module (spec 02, chat): spaces, channels (standard ones in a space and direct
-- messages of their participants), threads, messages with their per-thread seq, and mentions.
-- Principal ids (participants, authors, creators, the mentioned) name identity's rows; they are
-- not foreign keys, since a module's tables never reference another module's schema.
CREATE SCHEMA IF NOT EXISTS chat;

CREATE TABLE chat.spaces (
    id          uuid        PRIMARY KEY,
    name        text        NOT NULL CHECK (name <> ''),
    description text        NOT NULL DEFAULT '',
    -- Advanced by every change of the space; the snapshot reports it.
    version     bigint      NOT NULL CHECK (version > 0),
    archived_at timestamptz,
    created_at  timestamptz NOT NULL
);

CREATE TABLE chat.channels (
    id          uuid        PRIMARY KEY,
    -- NULL for a direct message, which lies in no space.
    space_id    uuid        REFERENCES chat.spaces (id),
    kind        text        NOT NULL CHECK (kind IN ('standard', 'dm')),
    -- Empty for a direct message.
    name        text        NOT NULL DEFAULT '',
    topic       text        NOT NULL DEFAULT '',
    -- A direct message's participant set in canonical form (the ids sorted, joined by commas):
    -- the unique constraint gives one set one direct message, also under concurrent creation.
    dm_key      text        CONSTRAINT channels_dm_key UNIQUE,
    version     bigint      NOT NULL CHECK (version > 0),
    archived_at timestamptz,
    created_at  timestamptz NOT NULL,
    CONSTRAINT channels_kind_shape CHECK (
        (kind = 'standard' AND space_id IS NOT NULL AND name <> '' AND dm_key IS NULL)
        OR (kind = 'dm' AND space_id IS NULL AND name = '' AND dm_key IS NOT NULL)
    )
);

-- A name is taken in its space while a channel that is not archived has it, in any case. The
-- index also serves the listing of a space's channels.
CREATE UNIQUE INDEX channels_space_name ON chat.channels (space_id, lower(name))
    WHERE kind = 'standard' AND archived_at IS NULL;

CREATE TABLE chat.dm_participants (
    channel_id   uuid NOT NULL REFERENCES chat.channels (id),
    principal_id uuid NOT NULL,
    PRIMARY KEY (channel_id, principal_id)
);

-- The direct messages a principal takes part in (the snapshot's channel listing).
CREATE INDEX dm_participants_principal ON chat.dm_participants (principal_id, channel_id);

CREATE TABLE chat.threads (
    id               uuid        PRIMARY KEY,
    channel_id       uuid        NOT NULL REFERENCES chat.channels (id),
    -- The channel's space, copied at creation (a channel never changes space), so a thread is
    -- placed for authorization without a join; NULL in a direct message.
    space_id         uuid,
    -- Empty for none.
    title            text        NOT NULL DEFAULT '',
    created_by       uuid        NOT NULL,
    created_at       timestamptz NOT NULL,
    version          bigint      NOT NULL CHECK (version > 0),
    -- The seq of the newest message. Posting advances it with UPDATE ... RETURNING, whose row
    -- lock serializes the posters of one thread, so seqs are consecutive without duplicate.
    last_message_seq bigint      NOT NULL DEFAULT 0 CHECK (last_message_seq >= 0),
    -- Messages at or below it never count as unread (bulk imports).
    unread_floor_seq bigint      NOT NULL DEFAULT 0 CHECK (unread_floor_seq >= 0)
);

-- The threads of channels (counters, listings).
CREATE INDEX threads_channel ON chat.threads (channel_id);

CREATE TABLE chat.messages (
    id           uuid        PRIMARY KEY,
    thread_id    uuid        NOT NULL REFERENCES chat.threads (id),
    channel_id   uuid        NOT NULL REFERENCES chat.channels (id),
    seq          bigint      NOT NULL CHECK (seq > 0),
    author_id    uuid        NOT NULL,
    -- Markdown; empty once the message is redacted.
    content_md   text        NOT NULL,
    created_at   timestamptz NOT NULL,
    edited_at    timestamptz,
    redacted_at  timestamptz,
    -- The natural key of an imported record; NULL for messages posted through the API.
    external_key text        CHECK (external_key <> ''),
    -- A second line of defence behind the row lock: one seq per thread. It also serves paging.
    CONSTRAINT messages_thread_seq UNIQUE (thread_id, seq),
    CONSTRAINT messages_redacted_without_content CHECK (redacted_at IS NULL OR content_md = '')
);

CREATE UNIQUE INDEX messages_external_key ON chat.messages (external_key) WHERE external_key IS NOT NULL;

CREATE TABLE chat.mentions (
    message_id   uuid   NOT NULL REFERENCES chat.messages (id),
    -- The message's thread, channel and seq, copied so unread mentions count without a join
    -- to messages.
    thread_id    uuid   NOT NULL,
    channel_id   uuid   NOT NULL,
    seq          bigint NOT NULL,
    principal_id uuid   NOT NULL,
    PRIMARY KEY (message_id, principal_id)
);

-- The unread mention count of one principal over a set of channels.
CREATE INDEX mentions_principal ON chat.mentions (principal_id, channel_id, thread_id, seq);
