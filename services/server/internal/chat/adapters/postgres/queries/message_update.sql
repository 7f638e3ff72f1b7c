-- Stores the changeable columns of a message (an edit or a redaction).
UPDATE chat.messages
SET content_md = $2, edited_at = $3, redacted_at = $4
WHERE id = $1
