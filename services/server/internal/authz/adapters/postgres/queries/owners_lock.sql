-- Serializes every change of the instance's owners until the transaction ends. The key is
-- "authzown" in ASCII.
SELECT pg_advisory_xact_lock(7022647186033702766)
