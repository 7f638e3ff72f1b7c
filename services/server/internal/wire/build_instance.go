package wire

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	authzpg "bothy.example.com/server/internal/authz/adapters/postgres"
	authzapp "bothy.example.com/server/internal/authz/app"
	instancehttp "bothy.example.com/server/internal/instance/adapters/httpapi"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	instanceapp "bothy.example.com/server/internal/instance/app"
)

// buildInstance builds the instance module's feature flags (over the event log's instance
// store and appender) and its handlers; the store itself, the counters and the idempotency
// keys come with the event log (eventlog.go), which every module appends through.
func (m *modules) buildInstance(b base, authorizer *authzapp.Authorizer) error {
	m.flags = instanceapp.NewFlags(b.runner, b.log.instance, b.log.appender)
	var err error
	m.handlers.instance, err = instancehttp.New(instancehttp.Deps{Authorizer: authorizer, Instance: b.log.instance})
	if err != nil {
		return fmt.Errorf("instance http: %w", err)
	}
	return nil
}

// instanceOwners binds identity's Owners to authz's grants: the owners' lock (which every
// owner grant change takes too), then the owners.
type instanceOwners struct{ store *authzpg.Store }

// InstanceOwners implements identityapp.Owners.
func (o instanceOwners) InstanceOwners(ctx context.Context) ([]uuid.UUID, error) {
	return o.store.LockedOwners(ctx)
}

// instanceID binds identity's Instance to the instance store.
type instanceID struct{ store *instancepg.Store }

// InstanceID implements identityapp.Instance.
func (i instanceID) InstanceID(ctx context.Context) (uuid.UUID, error) {
	info, err := i.store.Info(ctx)
	if err != nil {
		return uuid.Nil, fmt.Errorf("instance: %w", err)
	}
	return info.ID, nil
}
