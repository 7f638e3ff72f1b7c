-- Subscribes the session to the notifications the appender sends after each commit (the
-- payload is the new head seq as decimal text).
LISTEN bothy_event_log;
