-- Removes the mention rows of a message (before its new ones are stored, or for good when it
-- is redacted).
DELETE FROM chat.mentions
WHERE message_id = $1
