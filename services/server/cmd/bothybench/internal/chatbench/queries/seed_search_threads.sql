-- Seeds the threads of the search world in one statement, their last_message_seq already
-- that of the messages seed_search_messages.sql gives them. $1 thread ids, $2 their channels,
-- $3 the channels' spaces (all of one length), $4 the creator, $5 how many messages.
INSERT INTO chat.threads (
    id, channel_id, space_id, title, created_by, created_at, version, last_message_seq,
    unread_floor_seq, last_message_at
)
SELECT t.id, t.channel_id, t.space_id, 'Thread ' || t.ord, $4, now(), 1,
       ($5::bigint - t.ord) / t.n + 1, 0, now()
FROM (
    SELECT id, channel_id, space_id, ord, count(*) OVER () AS n
    FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) WITH ORDINALITY AS u(id, channel_id, space_id, ord)
) AS t
