-- chat.messages holds every message; sync.event_log is not touched here.
CREATE TABLE chat.messages (
    id uuid PRIMARY KEY,
    thread_id uuid NOT NULL,
    content_md text NOT NULL DEFAULT 'see sync.event_log'
);
CREATE INDEX messages_thread ON chat.messages (thread_id);
