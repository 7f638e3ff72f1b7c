-- Starts a partition upkeep: bounds every lock wait of this transaction by $1 (lock_timeout,
-- transaction-local), then waits for any other upkeep to finish (the advisory lock $2 is held
-- until COMMIT), so two maintenance processes never change the partitions at the same time.
SELECT set_config('lock_timeout', $1, true), pg_advisory_xact_lock($2)
