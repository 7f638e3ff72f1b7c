package app

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/ids"
)

// CreatePerson implements identity.Principals.
func (s *Service) CreatePerson(ctx context.Context, in identity.PersonInput) (identity.Principal, error) {
	p, err := domain.NewPerson(ids.New(), in, s.clock.Now())
	if err != nil {
		return identity.Principal{}, err
	}
	return s.insert(ctx, p)
}

// CreateApp implements identity.Principals.
func (s *Service) CreateApp(ctx context.Context, in identity.AppInput) (identity.Principal, error) {
	p, err := domain.NewApp(ids.New(), in, s.clock.Now())
	if err != nil {
		return identity.Principal{}, err
	}
	return s.insert(ctx, p)
}

// CreateAgentPrincipal implements identity.Principals.
func (s *Service) CreateAgentPrincipal(ctx context.Context, in identity.AgentInput) (identity.Principal, error) {
	p, err := domain.NewAgent(ids.New(), in, s.clock.Now())
	if err != nil {
		return identity.Principal{}, err
	}
	return s.insert(ctx, p)
}

func (s *Service) insert(ctx context.Context, p identity.Principal) (identity.Principal, error) {
	if err := s.store.InsertPrincipal(ctx, p); err != nil {
		return identity.Principal{}, fmt.Errorf("identity: create %s: %w", p.Kind, err)
	}
	return p, nil
}

// Get implements identity.Principals.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (identity.Principal, error) {
	p, err := s.store.Principal(ctx, id)
	if err != nil {
		return identity.Principal{}, fmt.Errorf("identity: get principal: %w", err)
	}
	return p, nil
}

// Deactivate implements identity.Principals. The owners are locked (their principal rows, in
// id order) before the last-owner rule counts them, so two owners deactivating each other at
// once cannot both succeed.
func (s *Service) Deactivate(ctx context.Context, id uuid.UUID) (identity.Principal, error) {
	now := s.clock.Now()
	var p identity.Principal
	err := s.tx.RunInTx(ctx, func(ctx context.Context) error {
		owners, err := s.owners.InstanceOwners(ctx)
		if err != nil {
			return err
		}
		if slices.Contains(owners, id) {
			locked, err := s.store.LockPrincipals(ctx, owners)
			if err != nil {
				return err
			}
			if !otherActive(locked, id) {
				if p, err = s.store.Principal(ctx, id); err != nil {
					return err
				}
				if p.DeactivatedAt.IsZero() {
					return identity.ErrLastOwner
				}
			}
		}
		changed, err := s.store.SetDeactivatedAt(ctx, id, now)
		if err != nil {
			return err
		}
		if p, err = s.store.Principal(ctx, id); err != nil {
			return err
		}
		if !changed {
			return nil
		}
		return s.appendEvent(ctx, kernel.Event{
			Type:         identity.EventPrincipalDeactivated,
			ResourceKind: kernel.ResourcePrincipal,
			ResourceID:   id,
			Payload:      identity.PrincipalDeactivatedPayload{PrincipalID: id, DeactivatedAt: p.DeactivatedAt},
		})
	})
	if err != nil {
		return identity.Principal{}, fmt.Errorf("identity: deactivate principal: %w", err)
	}
	return p, nil
}

// otherActive reports whether a principal of ps other than id is active.
func otherActive(ps []identity.Principal, id uuid.UUID) bool {
	for _, p := range ps {
		if p.ID != id && p.DeactivatedAt.IsZero() {
			return true
		}
	}
	return false
}

// Reactivate implements identity.Principals.
func (s *Service) Reactivate(ctx context.Context, id uuid.UUID) (identity.Principal, error) {
	var p identity.Principal
	err := s.tx.RunInTx(ctx, func(ctx context.Context) error {
		changed, err := s.store.SetDeactivatedAt(ctx, id, time.Time{})
		if err != nil {
			return err
		}
		if p, err = s.store.Principal(ctx, id); err != nil {
			return err
		}
		if !changed {
			return nil
		}
		return s.appendEvent(ctx, kernel.Event{
			Type:         identity.EventPrincipalReactivated,
			ResourceKind: kernel.ResourcePrincipal,
			ResourceID:   id,
			Payload:      identity.PrincipalReactivatedPayload{PrincipalID: id},
		})
	})
	if err != nil {
		return identity.Principal{}, fmt.Errorf("identity: reactivate principal: %w", err)
	}
	return p, nil
}

// Ref implements identity.Directory.
func (s *Service) Ref(ctx context.Context, id uuid.UUID) (identity.PrincipalRef, error) {
	refs, err := s.Refs(ctx, []uuid.UUID{id})
	if err != nil {
		return identity.PrincipalRef{}, err
	}
	ref, ok := refs[id]
	if !ok {
		return identity.PrincipalRef{}, fmt.Errorf("identity: principal ref: %w", identity.ErrPrincipalNotFound)
	}
	return ref, nil
}

// Refs implements identity.Directory. Duplicate ids and uuid.Nil are dropped before the one
// query; with nothing left there is no query at all.
func (s *Service) Refs(ctx context.Context, idList []uuid.UUID) (map[uuid.UUID]identity.PrincipalRef, error) {
	return s.refs(ctx, idList, s.store.Refs)
}

// ActiveRefs implements identity.Directory: Refs of the principals that are not deactivated.
func (s *Service) ActiveRefs(ctx context.Context, idList []uuid.UUID) (map[uuid.UUID]identity.PrincipalRef, error) {
	return s.refs(ctx, idList, s.store.ActiveRefs)
}

// refs drops duplicate ids and uuid.Nil and reads the rest with read in one query; with
// nothing left there is no query at all.
func (s *Service) refs(ctx context.Context, idList []uuid.UUID, read func(context.Context, []uuid.UUID) ([]identity.PrincipalRef, error)) (map[uuid.UUID]identity.PrincipalRef, error) {
	seen := make(map[uuid.UUID]struct{}, len(idList))
	unique := make([]uuid.UUID, 0, len(idList))
	for _, id := range idList {
		if _, dup := seen[id]; dup || id == uuid.Nil {
			continue
		}
		seen[id] = struct{}{}
		unique = append(unique, id)
	}
	out := make(map[uuid.UUID]identity.PrincipalRef, len(unique))
	if len(unique) == 0 {
		return out, nil
	}
	refs, err := read(ctx, unique)
	if err != nil {
		return nil, fmt.Errorf("identity: principal refs: %w", err)
	}
	for _, r := range refs {
		out[r.ID] = r
	}
	return out, nil
}

// ByHandles implements identity.Directory. Each handle is brought to its stored form (lower
// case) and dropped when it is no valid handle, duplicates are dropped, and what is left is
// looked up in one query; with nothing left there is no query at all.
func (s *Service) ByHandles(ctx context.Context, handles []string) (map[string]identity.PrincipalRef, error) {
	seen := make(map[string]struct{}, len(handles))
	unique := make([]string, 0, len(handles))
	for _, h := range handles {
		stored, ok := domain.NormalizeHandle(h)
		if _, dup := seen[stored]; !ok || dup {
			continue
		}
		seen[stored] = struct{}{}
		unique = append(unique, stored)
	}
	out := make(map[string]identity.PrincipalRef, len(unique))
	if len(unique) == 0 {
		return out, nil
	}
	refs, err := s.store.ActiveByHandles(ctx, unique)
	if err != nil {
		return nil, fmt.Errorf("identity: principals by handle: %w", err)
	}
	for _, r := range refs {
		out[r.Handle] = r
	}
	return out, nil
}
