-- Seeds the messages of the search world in one statement: the post use case would take a
-- transaction and an event per message, far too long for a million. $1 thread ids and $2
-- their channels (of one length), $3 how many messages, $4 the author, $5 the vocabulary.
-- Message i goes to thread i mod n (n threads) with seq i / n + 1, so each thread's seqs run
-- 1, 2, 3, ... without gap; its text is 6 to 15 words of the vocabulary, each drawn
-- log-uniformly (word k with a probability about 1 / (k ln N)), a Zipf-like spread of rare and
-- common words. The stored generated search_vector is computed by the insert, as for a post.
WITH t AS (
    SELECT id, channel_id, ord - 1 AS k, count(*) OVER () AS n
    FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS t(id, channel_id, ord)
)
INSERT INTO chat.messages (id, thread_id, channel_id, seq, author_id, content_md, created_at)
SELECT gen_random_uuid(), t.id, t.channel_id, g.i / t.n + 1, $4,
       (SELECT string_agg(($5::text[])[floor(power(cardinality($5::text[]), random()))::int], ' ')
        FROM generate_series(1, 6 + g.i % 10)),
       now() - make_interval(secs => ($3 - g.i))
FROM generate_series(0, $3::int - 1) AS g(i)
JOIN t ON t.k = g.i % t.n
