-- Which of the principals $1 are agents that are not archived: the ones a message invokes.
SELECT principal_id
FROM agents.agents
WHERE principal_id = ANY ($1::uuid[])
  AND archived_at IS NULL
