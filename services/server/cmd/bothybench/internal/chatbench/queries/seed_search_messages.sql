-- Seeds the messages of the search world in one statement: the post use case would take a
-- transaction and an event per message, far too long for a million. $1 thread ids and $2
-- their channels (of one length n), $3 how many messages, $4 the author, $5 the vocabulary's
-- size N, $6 its 16 syllables. Message i goes to thread i mod n (its id and channel read from
-- the arrays by index, uuid elements being of fixed length: no join) with seq i / n + 1, so
-- each thread's seqs run 1, 2, 3, ... without gap, and gets an id that grows with i (a UUIDv7
-- shape), so the primary key is appended to like the server's. Its text is 6 to 15 words,
-- each word k drawn log-uniformly from 1 .. N - 1 (word k with a probability about
-- 1 / (k ln N), a Zipf-like spread of rare and common words) and spelled from k's three
-- base-16 digits as syllables (searchWord in searchbench.go spells it alike). The stored
-- generated search_vector is computed by the insert, as for a post.
INSERT INTO chat.messages (id, thread_id, channel_id, seq, author_id, content_md, created_at)
SELECT ('01930000-0000-7000-8000-' || lpad(to_hex(g.i), 12, '0'))::uuid,
       ($1::uuid[])[g.i % cardinality($1::uuid[]) + 1], ($2::uuid[])[g.i % cardinality($1::uuid[]) + 1],
       g.i / cardinality($1::uuid[]) + 1, $4,
       (SELECT string_agg(($6::text[])[w.k % 16 + 1] || ($6::text[])[w.k / 16 % 16 + 1] || ($6::text[])[w.k / 256 % 16 + 1], ' ')
        FROM (SELECT floor(power($5::int, random()))::int AS k FROM generate_series(1, 6 + g.i % 10)) AS w),
       now() - make_interval(secs => ($3 - g.i))
FROM generate_series(0, $3::int - 1) AS g(i)
