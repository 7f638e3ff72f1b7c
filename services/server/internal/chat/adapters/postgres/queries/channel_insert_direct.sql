-- Stores a new direct message with its participants ($5) in one statement, unless a direct
-- message has the participant set's key ($2) already; the id of the new channel, or no row.
WITH created AS (
    INSERT INTO chat.channels (id, space_id, kind, name, topic, dm_key, version, archived_at, created_at)
    VALUES ($1, NULL, 'dm', '', '', $2, $3, NULL, $4)
    ON CONFLICT (dm_key) DO NOTHING
    RETURNING id
), participants AS (
    INSERT INTO chat.dm_participants (channel_id, principal_id)
    SELECT created.id, p.principal_id
    FROM created, unnest($5::uuid[]) AS p (principal_id)
)
SELECT id FROM created
