-- Redacts every event of one resource ($1 kind, $2 id) not redacted yet: sets redacted_at and
-- keeps of the payload only the id fields of its type; $3 maps each type to the names of its id
-- fields (a JSON object of arrays), so the reduction needs no round trip per event.
UPDATE sync.event_log AS e
SET redacted_at = now(),
    payload = coalesce((
        SELECT jsonb_object_agg(p.key, p.value)
        FROM jsonb_each(e.payload) AS p
        WHERE p.key IN (SELECT jsonb_array_elements_text($3::jsonb -> e.type))
    ), '{}'::jsonb)
WHERE e.resource_kind = $1
  AND e.resource_id = $2
  AND e.redacted_at IS NULL
