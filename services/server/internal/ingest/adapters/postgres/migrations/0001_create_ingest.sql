-- The git ingester's own rows (spec 08): where each section of a repository's passes stands,
-- and which record it wrote where. Threads, messages and channels live in the chat schema and
-- principals in identity; no foreign key crosses a schema, so their ids are plain uuids here.
CREATE SCHEMA IF NOT EXISTS ingest;

-- One cursor per repository and section. A section's cursor advances only up to the first
-- record that failed to be written, so the next pass retries it. channel_id binds the
-- repository to the channel of its first pass.
CREATE TABLE ingest.cursors (
    repository text        NOT NULL CHECK (repository <> ''),
    section    text        NOT NULL CHECK (section IN ('prs', 'issues', 'commits')),
    channel_id uuid        NOT NULL,
    position   text        NOT NULL CHECK (position <> ''),
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (repository, section)
);

-- The records the ingester wrote, by natural key (git:commit:<sha>, gh:pr:<repo>#<n>,
-- gh:issue:<repo>#<n>, git:branch:<repo>:<branch>), stored in the transaction of their chat
-- write, so a row exists exactly when its message does. merge_commit is the commit a merged
-- pull request was merged as, so a later pass finds the thread of a merge commit.
CREATE TABLE ingest.records (
    natural_key  text        PRIMARY KEY CHECK (natural_key <> ''),
    kind         text        NOT NULL CHECK (kind IN ('pr', 'issue', 'commit', 'branch')),
    repository   text        NOT NULL CHECK (repository <> ''),
    channel_id   uuid        NOT NULL,
    thread_id    uuid        NOT NULL,
    message_id   uuid        NOT NULL,
    merge_commit text        CHECK (merge_commit ~ '^([0-9a-f]{40}|[0-9a-f]{64})$'),
    created_at   timestamptz NOT NULL
);

-- Abbreviated commit ids are looked up by key prefix (LIKE 'git:commit:abc1234%').
CREATE INDEX records_key_prefix ON ingest.records (natural_key text_pattern_ops);
CREATE INDEX records_merge_commit ON ingest.records (merge_commit) WHERE merge_commit IS NOT NULL;
