-- Whether a channel exists, archived or not.
SELECT EXISTS (SELECT 1 FROM chat.channels WHERE id = $1)
