-- Tells every listener the new head (the last seq this transaction took, as decimal text).
-- PostgreSQL delivers it at COMMIT, and never for a transaction that rolls back.
SELECT pg_notify('bothy_event_log', current_setting('bothy.event_seq'))
