-- Removes every reaction of a message, when it is redacted.
DELETE FROM chat.reactions
WHERE message_id = $1
