-- Seeds the threads of the sync world (the catch-up and snapshot cases) in one statement: the
-- thread use case would take a transaction, a first message and two events per thread, far too
-- long for ten thousand of them. $1 thread ids, $2 their channels, $3 the channels' spaces (all
-- of one length), $4 the creator. The counters start at 0; seed_sync_thread_counters.sql sets
-- them from the generated log.
INSERT INTO chat.threads (
    id, channel_id, space_id, title, created_by, created_at, version, last_message_seq,
    unread_floor_seq, last_message_at
)
SELECT t.id, t.channel_id, t.space_id, 'Thread ' || t.ord, $4, now(), 1, 0, 0, now()
FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) WITH ORDINALITY AS t(id, channel_id, space_id, ord)
