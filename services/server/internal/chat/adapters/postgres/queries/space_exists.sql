-- Whether a space exists, archived or not.
SELECT EXISTS (SELECT 1 FROM chat.spaces WHERE id = $1)
