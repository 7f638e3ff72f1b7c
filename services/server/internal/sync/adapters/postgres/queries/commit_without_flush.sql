-- The current transaction commits without waiting for its WAL to reach the disk
-- (synchronous_commit off until its end): an ack's update, sent with it in one pipelined batch
-- whose implicit transaction ends at the batch's Sync. A crash may forget the last acks; the
-- consumer then delivers those events again, which at least once delivery allows (ADR 0026).
SELECT set_config('synchronous_commit', 'off', true)
