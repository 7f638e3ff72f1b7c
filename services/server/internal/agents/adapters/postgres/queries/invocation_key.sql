-- The key invocation tokens are derived from (made by the migration).
SELECT key
FROM agents.invocation_key
