-- Serialises the creation of one principal's consumers for the rest of the transaction, so
-- that the count below and the insert after it cannot race past sync.max_consumers_per_principal.
SELECT pg_advisory_xact_lock(hashtextextended('sync.consumers:' || $1::text, 0))
