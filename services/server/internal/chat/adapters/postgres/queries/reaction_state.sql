-- Of message $1: how many distinct reactions it holds, whether anyone made reaction $3, and
-- whether principal $2 did.
SELECT count(DISTINCT reaction),
       coalesce(bool_or(reaction = $3), false),
       coalesce(bool_or(reaction = $3 AND principal_id = $2), false)
FROM chat.reactions
WHERE message_id = $1
