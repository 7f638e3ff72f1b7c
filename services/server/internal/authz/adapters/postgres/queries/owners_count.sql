-- The number of owner grants, read after owners_lock.sql in a statement of its own, so that
-- its snapshot includes every owner change committed before the lock was granted.
SELECT count(*) FROM authz.grants WHERE role = 'owner' AND resource_kind = 'instance'
