-- Whether the query text $1 has a word the GIN index can look for: an empty query (numnode 0,
-- only punctuation) finds nothing, and querytree gives 'T' for one made only of excluded
-- words, which would match nearly every message without the index.
SELECT numnode(q) > 0 AND querytree(q) <> 'T'
FROM websearch_to_tsquery('simple', $1) AS q
