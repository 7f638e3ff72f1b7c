-- A channel's threads in activity order (listChannelThreads, spec 05a "A channel's threads"):
-- the time of each thread's newest message, kept on the thread row by every post (the
-- message's insert sets it in the same statement), and the index that pages a channel's
-- threads newest first without reading the others.
ALTER TABLE chat.threads ADD COLUMN last_message_at timestamptz;

-- Threads of earlier versions: their newest message's time, or their creation when they have
-- none.
UPDATE chat.threads t
SET last_message_at = coalesce(
    (SELECT m.created_at FROM chat.messages m WHERE m.thread_id = t.id AND m.seq = t.last_message_seq),
    t.created_at);

ALTER TABLE chat.threads ALTER COLUMN last_message_at SET NOT NULL;

-- Scanned backwards from the cursor: (last_message_at, id) descending within a channel.
CREATE INDEX threads_channel_activity ON chat.threads (channel_id, last_message_at, id);
