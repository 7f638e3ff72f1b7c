package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/agents/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

// List implements agents.Agents: the active profiles, each kept only when the actor may read
// it (agent.read in filter mode: a hidden agent is dropped, not audited), named through the
// directory in one batch, ordered by handle.
func (s *Service) List(ctx context.Context) ([]agents.Agent, error) {
	profiles, err := s.store.ActiveProfiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("agents: list: %w", err)
	}
	filter := authorize.Filter(ctx)
	visible := make([]domain.Profile, 0, len(profiles))
	for _, p := range profiles {
		err := s.authz.Authorize(filter, kernel.ActionAgentRead, authorize.Resource{Kind: kernel.ResourceAgent, ID: p.PrincipalID})
		switch {
		case err == nil:
			visible = append(visible, p)
		case errors.Is(err, problem.ErrNotFound), errors.Is(err, problem.ErrForbidden):
			// Hidden from this actor: dropped.
		default:
			return nil, fmt.Errorf("agents: list: authorize agent %s: %w", p.PrincipalID, err)
		}
	}
	ids := make([]uuid.UUID, len(visible))
	for i, p := range visible {
		ids[i] = p.PrincipalID
	}
	refs, err := s.directory.Refs(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("agents: list: name agents: %w", err)
	}
	out := make([]agents.Agent, 0, len(visible))
	for _, p := range visible {
		if ref, ok := refs[p.PrincipalID]; ok {
			out = append(out, toAgent(ref, p))
		}
	}
	slices.SortFunc(out, func(a, b agents.Agent) int {
		return cmp.Or(cmp.Compare(a.Handle, b.Handle), cmp.Compare(a.ID.String(), b.ID.String()))
	})
	return out, nil
}
