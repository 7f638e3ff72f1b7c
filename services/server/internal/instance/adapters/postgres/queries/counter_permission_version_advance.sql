-- Advances permission_version by one and returns (event_seq_taken, new value). It refuses, by
-- updating nothing, when this transaction already advanced event_seq (bothy.event_seq is set
-- locally): taking the counters in the other order could deadlock. After an earlier
-- transaction of the session set it locally, current_setting returns '' rather than NULL.
WITH taken AS (
    SELECT coalesce(current_setting('bothy.event_seq', true), '') <> '' AS event_seq_taken
), advanced AS (
    UPDATE instance.sequence_counters
    SET value = value + 1
    WHERE name = 'permission_version'
      AND NOT (SELECT event_seq_taken FROM taken)
    RETURNING value
)
SELECT (SELECT event_seq_taken FROM taken), (SELECT value FROM advanced)
