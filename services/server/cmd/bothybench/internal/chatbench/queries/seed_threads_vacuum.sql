-- After the bulk seeding: what autovacuum would do on a live instance, done at once so the
-- measurement does not race it.
VACUUM (ANALYZE) chat.threads, chat.messages, chat.mentions, sync.read_states
