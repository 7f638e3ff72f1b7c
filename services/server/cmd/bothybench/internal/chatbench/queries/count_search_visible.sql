-- How many messages of the channels $2 match the query $1: what a search of a reader who sees
-- exactly those channels ranks, for the report.
SELECT count(*)
FROM chat.messages m
WHERE m.search_vector @@ websearch_to_tsquery('simple', $1)
  AND m.channel_id IN (SELECT unnest($2::uuid[]))
