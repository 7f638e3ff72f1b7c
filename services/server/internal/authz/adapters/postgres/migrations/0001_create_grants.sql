-- Role grants of principals on the instance, spaces and channels (spec 02 authz, spec 04).
-- principal_id, resource_id and created_by name rows of other modules (identity's principals,
-- chat's spaces and channels, instance's row); they are not foreign keys, since a module's
-- tables never reference another module's schema.
CREATE SCHEMA IF NOT EXISTS authz;

CREATE TABLE authz.grants (
    id             uuid        PRIMARY KEY,
    principal_id   uuid        NOT NULL,
    resource_kind  text        NOT NULL CHECK (resource_kind IN ('instance', 'space', 'channel')),
    -- The space or channel; the instance's id for an instance grant.
    resource_id    uuid        NOT NULL,
    role           text        NOT NULL CHECK (role IN ('viewer', 'member', 'admin', 'owner')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    created_by     uuid        NOT NULL,
    CONSTRAINT grants_owner_on_instance_only CHECK (role <> 'owner' OR resource_kind = 'instance'),
    -- One grant per principal and resource; it also serves the Scope query by principal_id.
    CONSTRAINT grants_one_per_resource UNIQUE (principal_id, resource_kind, resource_id)
);

-- Who holds a grant on a resource (listing a channel's members, cleaning up after it).
CREATE INDEX grants_resource ON authz.grants (resource_kind, resource_id);
