-- Removes a principal's reaction; no row is affected when there was none.
DELETE FROM chat.reactions
WHERE message_id = $1
  AND reaction = $3
  AND principal_id = $2
