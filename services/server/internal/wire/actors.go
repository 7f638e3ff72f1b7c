package wire

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/instance"
	syncdomain "bothy.example.com/server/internal/sync/domain"
)

// eventActors is the directory catch-up and the gateway name event actors with
// (syncapp.PrincipalRefs): identity's principals, and the instance itself for an event no
// principal caused (spec 03, actor), whose actor id is the instance's id. That one is named
// {id, kind: system, display_name: the instance's name}, so every event's actor is a
// principal or the system and validates against the API's EventActor.
type eventActors struct {
	principals interface {
		Refs(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]identity.PrincipalRef, error)
	}
	instance interface {
		Info(ctx context.Context) (instance.Info, error)
	}
}

// Refs implements syncapp.PrincipalRefs: one query for the principals, and a read of the
// instance row only when some id is no principal (a page without system events pays nothing).
func (a eventActors) Refs(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]identity.PrincipalRef, error) {
	refs, err := a.principals.Refs(ctx, ids)
	if err != nil {
		return nil, err
	}
	missing := false
	for _, id := range ids {
		if _, ok := refs[id]; !ok && id != uuid.Nil {
			missing = true
			break
		}
	}
	if !missing {
		return refs, nil
	}
	info, err := a.instance.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("the instance, for a system actor: %w", err)
	}
	if _, ok := refs[info.ID]; !ok && slices.Contains(ids, info.ID) {
		if refs == nil {
			refs = make(map[uuid.UUID]identity.PrincipalRef, 1)
		}
		refs[info.ID] = identity.PrincipalRef{ID: info.ID, Kind: syncdomain.KindSystem, DisplayName: info.Name}
	}
	return refs, nil
}
