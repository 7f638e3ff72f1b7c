-- After the bulk seeding: what autovacuum would do on a live instance (statistics for the
-- planner, hint bits and the visibility map), done at once so the measurement does not race it.
VACUUM (ANALYZE) chat.threads, chat.messages
