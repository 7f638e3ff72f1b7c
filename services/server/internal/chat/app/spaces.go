package app

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/ids"
)

// spaceCapabilities are the actions a SpaceView reports, sorted.
var spaceCapabilities = []kernel.Action{
	kernel.ActionChannelCreate, kernel.ActionGrantAdmin, kernel.ActionSpaceArchive, kernel.ActionSpaceUpdate,
}

// Create implements chat.Spaces: space.create on the instance, then the input's validation,
// then the space and space.created in one transaction.
func (v spaces) Create(ctx context.Context, in chat.SpaceInput) (chat.Space, error) {
	s := v.s
	if err := s.authz.Authorize(ctx, kernel.ActionSpaceCreate, authorize.Instance()); err != nil {
		return chat.Space{}, fmt.Errorf("chat: create space: %w", err)
	}
	who, err := actorOf(ctx)
	if err != nil {
		return chat.Space{}, fmt.Errorf("chat: create space: %w", err)
	}
	sp, err := domain.NewSpace(ids.New(), in, s.clock.Now())
	if err != nil {
		return chat.Space{}, fmt.Errorf("chat: create space: %w", err)
	}
	err = s.tx.RunInTx(ctx, func(ctx context.Context) error {
		if err := s.store.InsertSpace(ctx, sp); err != nil {
			return err
		}
		return s.appender.Append(ctx, spaceCreated(who.PrincipalID, sp))
	})
	if err != nil {
		return chat.Space{}, fmt.Errorf("chat: create space: %w", err)
	}
	return sp, nil
}

// List implements chat.Spaces: space.read on the instance (every principal; it refuses a
// pending device), then the spaces the actor's Scope admits, each kept when space.read on it
// is allowed (filter mode: hidden ones are not audited), with the actor's level and
// capabilities.
func (v spaces) List(ctx context.Context) ([]chat.SpaceView, error) {
	s := v.s
	if err := s.authz.Authorize(ctx, kernel.ActionSpaceRead, authorize.Instance()); err != nil {
		return nil, fmt.Errorf("chat: list spaces: %w", err)
	}
	dec, err := s.authz.ForActor(ctx)
	if err != nil {
		return nil, fmt.Errorf("chat: list spaces: %w", err)
	}
	scope := dec.Scope()
	list, err := s.store.Spaces(ctx, SpaceFilter{All: scope.InstanceWide(), SpaceIDs: scope.VisibleSpaceIDs()})
	if err != nil {
		return nil, fmt.Errorf("chat: list spaces: %w", err)
	}
	filter := authorize.Filter(ctx)
	out := make([]chat.SpaceView, 0, len(list))
	for _, sp := range list {
		res := spaceResource(sp.ID)
		err := dec.Authorize(filter, kernel.ActionSpaceRead, res)
		switch {
		case isDenial(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("chat: list spaces: authorize space %s: %w", sp.ID, err)
		}
		caps, err := capabilities(filter, dec, spaceCapabilities, func(kernel.Action) authorize.Resource { return res })
		if err != nil {
			return nil, fmt.Errorf("chat: list spaces: %w", err)
		}
		out = append(out, chat.SpaceView{Space: sp, Level: dec.Level(res), Capabilities: caps})
	}
	return out, nil
}

// Archive implements chat.Spaces: the space is loaded, space.archive on it authorized, and
// unless it is archived already its archive time and version are set under the row lock with
// space.archived in one transaction.
func (v spaces) Archive(ctx context.Context, id uuid.UUID) (chat.Space, error) {
	s := v.s
	sp, err := s.store.Space(ctx, id)
	if err != nil {
		return chat.Space{}, fmt.Errorf("chat: archive space: %w", err)
	}
	if err := s.authz.Authorize(ctx, kernel.ActionSpaceArchive, spaceResource(sp.ID)); err != nil {
		return chat.Space{}, fmt.Errorf("chat: archive space: %w", err)
	}
	who, err := actorOf(ctx)
	if err != nil {
		return chat.Space{}, fmt.Errorf("chat: archive space: %w", err)
	}
	if !sp.ArchivedAt.IsZero() {
		return sp, nil
	}
	err = s.tx.RunInTx(ctx, func(ctx context.Context) error {
		changed := false
		sp, err = s.store.UpdateSpace(ctx, id, func(sp *chat.Space) (bool, error) {
			changed = domain.Archive(&sp.ArchivedAt, &sp.Version, s.clock.Now())
			return changed, nil
		})
		if err != nil || !changed {
			return err
		}
		return s.appender.Append(ctx, spaceArchived(who.PrincipalID, sp))
	})
	if err != nil {
		return chat.Space{}, fmt.Errorf("chat: archive space: %w", err)
	}
	return sp, nil
}
