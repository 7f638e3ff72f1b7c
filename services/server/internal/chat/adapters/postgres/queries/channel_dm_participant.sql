-- Whether the channel is a direct message, and whether the principal takes part in it; no row
-- for an unknown channel.
SELECT c.kind = 'dm',
       EXISTS (SELECT 1 FROM chat.dm_participants p WHERE p.channel_id = c.id AND p.principal_id = $2)
FROM chat.channels c
WHERE c.id = $1
