-- Seeds the authorization world: one member grant of the principal $1 on each channel of $2,
-- made by $3. The benchmark writes them directly: the chat module that would make the channels
-- does not exist yet, so the grant use case would refuse them (authz's channel directory reports
-- no channels).
INSERT INTO authz.grants (id, principal_id, resource_kind, resource_id, role, created_by)
SELECT g.id, $1, 'channel', g.channel_id, 'member', $3
FROM unnest($4::uuid[], $2::uuid[]) AS g(id, channel_id)
