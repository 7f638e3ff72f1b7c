-- Message search (spec 05a "Message search", ADR 0024): every message's text as a tsvector of
-- the language-neutral text search configuration 'simple' (lower-cased words, no stemming, no
-- stop words, so every language of a multilingual chat is found alike), in a stored generated
-- column. PostgreSQL computes it in the statement that writes content_md, so a post, an edit
-- and a redaction update it in their own transaction, and a redacted message (content_md
-- empty) has an empty vector that matches no query.
ALTER TABLE chat.messages
    ADD COLUMN search_vector tsvector NOT NULL
        GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, content_md)) STORED;

-- The GIN index that finds the messages of a query's words.
CREATE INDEX messages_search ON chat.messages USING gin (search_vector);
