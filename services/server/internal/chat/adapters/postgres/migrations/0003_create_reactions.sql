-- Reactions to messages (ADR 0025): one row per principal, message and reaction, so a
-- principal makes each reaction at most once per message. The reaction is a shortcode or a
-- Unicode emoji, validated by chat/domain.Reaction and stored as sent. principal_id names
-- identity's row by value, like every principal id of the chat schema.
CREATE TABLE chat.reactions (
    message_id   uuid        NOT NULL REFERENCES chat.messages (id),
    -- The key's order serves both the counts of a page of messages (grouped by message and
    -- reaction) and the lookup of one principal's reaction.
    reaction     text        NOT NULL CHECK (reaction <> ''),
    principal_id uuid        NOT NULL,
    created_at   timestamptz NOT NULL,
    -- Orders a message's reactions by when each was first made, also when the clock gives two
    -- of them the same time.
    made_seq     bigint      GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (message_id, reaction, principal_id)
);
