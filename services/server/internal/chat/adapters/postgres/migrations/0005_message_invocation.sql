-- The invocation a message answers (an agent's reply posted with its invocation token, ADR
-- 0031), kept on the message row so every read of the message shows it, not only the post's
-- answer and its message.created. It names agents' invocations row by value, with no foreign
-- key (chat does not know the agents schema), like every principal id of the chat schema;
-- NULL for a message that answers none.
ALTER TABLE chat.messages ADD COLUMN invocation_id uuid;
