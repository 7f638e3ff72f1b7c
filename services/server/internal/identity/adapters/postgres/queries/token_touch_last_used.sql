-- Records the last use of many tokens in one statement (one flush of a process). A time never
-- moves a token's last use backwards, so flushes of several processes may interleave.
UPDATE identity.tokens t
SET last_used_at = u.at
FROM unnest($1::uuid[], $2::timestamptz[]) AS u (id, at)
WHERE t.id = u.id
  AND (t.last_used_at IS NULL OR t.last_used_at < u.at)
