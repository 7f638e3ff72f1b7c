-- Locks the event log and all its partitions against every reader and writer until COMMIT, for
-- the few statements that create, fill and drop partitions. Taken on the parent first, as every
-- reader and writer does, so it cannot deadlock with them.
LOCK TABLE sync.event_log IN ACCESS EXCLUSIVE MODE
