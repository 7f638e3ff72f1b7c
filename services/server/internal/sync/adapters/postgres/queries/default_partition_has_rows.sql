-- Whether the default partition holds any event (rows no time partition covered).
SELECT EXISTS (SELECT 1 FROM sync.event_log_default)
