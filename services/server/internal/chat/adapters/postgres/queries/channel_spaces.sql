-- The space of each of a batch of channels; direct messages (no space) and unknown channels
-- give no row.
SELECT id, space_id
FROM chat.channels
WHERE id = ANY ($1::uuid[])
  AND space_id IS NOT NULL
