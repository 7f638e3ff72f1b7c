-- The principals holding the owner grant on the instance, read after owners_lock.sql in a
-- statement of its own (as owners_count.sql), for identity's last-active-owner rule.
SELECT principal_id FROM authz.grants WHERE role = 'owner' AND resource_kind = 'instance' ORDER BY principal_id
