-- Sets each seeded thread's last_message_seq to its number of message.created events among the
-- generated seqs $1 < seq <= $2, so the chat counters agree with the log.
UPDATE chat.threads AS t
SET last_message_seq = c.messages
FROM (
    SELECT thread_id, count(*) AS messages
    FROM sync.event_log
    WHERE seq > $1
      AND seq <= $2
      AND type = 'message.created'
    GROUP BY thread_id
) AS c
WHERE t.id = c.thread_id
