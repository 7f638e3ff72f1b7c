-- Agent presence (spec 03, "Presence", ADR 0026): the last heartbeat of each agent and the
-- billing mode it reported, beside what the last agent.presence_changed event announced and
-- when (announced_at NULL before the first), so that at most one event per agent per
-- agents.presence_min_interval is appended and the snapshot reports what the events said.
CREATE TABLE agents.agent_presence (
    agent_id               uuid        PRIMARY KEY,
    last_heartbeat_at      timestamptz NOT NULL,
    reported_billing_mode  text        NOT NULL DEFAULT '',
    announced_state        text        NOT NULL DEFAULT 'unknown'
        CHECK (announced_state IN ('unknown', 'online', 'idle', 'offline')),
    announced_billing_mode text        NOT NULL DEFAULT '',
    announced_at           timestamptz
);
