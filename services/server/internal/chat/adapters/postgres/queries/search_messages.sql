-- One page of a message search (spec 05a, "Message search"; ADR 0024): at most $13 messages
-- matching the web-search style query $1 ('simple' configuration, like the generated
-- search_vector) that are not redacted, ordered by rank descending then id descending,
-- strictly after the position ($11 rank, $12 id) when $11 is set.
-- The visibility prefilter (from the actor's Scope; the caller decides each row again): $2
-- whether it is instance-wide (every standard channel, never a direct message), $3 its
-- granted channels, $4 its fully visible spaces, matched through IN (SELECT unnest(...)) as
-- catch-up does. The filters are $5 space, $6 channel, $7 thread, $8 author, $9 created
-- before, $10 created after, each NULL for none. $14 are ts_headline's options; the excerpt
-- and the mentions are computed for the page's rows only, and the markers ts_headline puts
-- around matches (U+0002, U+0003) are first turned into spaces in the text, so in the result
-- they only ever mark matches.
WITH query AS MATERIALIZED (
    SELECT websearch_to_tsquery('simple', $1) AS q
),
page AS (
    SELECT m.id, m.thread_id, m.channel_id, t.space_id, m.seq, m.author_id, m.content_md,
           m.created_at, m.edited_at, m.redacted_at, m.external_key, m.invocation_id,
           ts_rank(m.search_vector, query.q) AS rank
    FROM query, chat.messages m
    JOIN chat.threads t ON t.id = m.thread_id
    WHERE m.search_vector @@ query.q
      AND m.redacted_at IS NULL
      AND (($2::boolean AND t.space_id IS NOT NULL)
           OR m.channel_id IN (SELECT unnest($3::uuid[]))
           OR t.space_id IN (SELECT unnest($4::uuid[])))
      AND ($5::uuid IS NULL OR t.space_id = $5)
      AND ($6::uuid IS NULL OR m.channel_id = $6)
      AND ($7::uuid IS NULL OR m.thread_id = $7)
      AND ($8::uuid IS NULL OR m.author_id = $8)
      AND ($9::timestamptz IS NULL OR m.created_at < $9)
      AND ($10::timestamptz IS NULL OR m.created_at > $10)
      AND ($11::real IS NULL
           OR ts_rank(m.search_vector, query.q) < $11
           OR (ts_rank(m.search_vector, query.q) = $11 AND m.id < $12))
    ORDER BY rank DESC, m.id DESC
    LIMIT $13
)
SELECT page.id, page.thread_id, page.channel_id, page.space_id, page.seq, page.author_id,
       page.content_md, page.created_at, page.edited_at, page.redacted_at, page.external_key,
       page.invocation_id,
       ARRAY(SELECT mn.principal_id FROM chat.mentions mn WHERE mn.message_id = page.id ORDER BY mn.principal_id),
       page.rank,
       ts_headline('simple', translate(page.content_md, E'\x02\x03', '  '), query.q, $14)
FROM page, query
ORDER BY page.rank DESC, page.id DESC
