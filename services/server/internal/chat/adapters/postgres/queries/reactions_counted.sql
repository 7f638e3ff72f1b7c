-- The reactions of the messages $1, counted, with whether reader $2 made each, per message in
-- the order each reaction was first made (made_seq, which no two rows share).
SELECT message_id, reaction, count(*), bool_or(principal_id = $2)
FROM chat.reactions
WHERE message_id = ANY($1)
GROUP BY message_id, reaction
ORDER BY message_id, min(made_seq)
