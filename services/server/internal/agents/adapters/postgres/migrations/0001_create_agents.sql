-- Agent profiles (spec 02). An agent is an identity principal of kind agent; its name and handle
-- live there, this row holds what only agents have. principal_id and created_by are not foreign
-- keys: principals live in the identity schema, and no foreign key crosses a schema. createAgent
-- writes the principal and this row in one transaction.
CREATE SCHEMA IF NOT EXISTS agents;

CREATE TABLE agents.agents (
    principal_id uuid        PRIMARY KEY,
    -- The same limit the domain checks (agents/domain.MaxDescriptionLen).
    description  text        NOT NULL DEFAULT '' CHECK (char_length(description) <= 500),
    created_by   uuid        NOT NULL,
    created_at   timestamptz NOT NULL,
    archived_at  timestamptz CHECK (archived_at >= created_at)
);
