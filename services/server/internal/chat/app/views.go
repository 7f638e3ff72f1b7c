package app

import (
	"context"
	"fmt"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
)

// capabilities returns those of actions (sorted) the decider allows, each on the resource
// resourceOf gives for it, decided in filter mode (filterCtx) so that what the actor may not
// do is not audited as a denial.
func capabilities(filterCtx context.Context, dec authz.Decider, actions []kernel.Action, resourceOf func(kernel.Action) authorize.Resource) ([]kernel.Action, error) {
	out := make([]kernel.Action, 0, len(actions))
	for _, a := range actions {
		err := dec.Authorize(filterCtx, a, resourceOf(a))
		switch {
		case err == nil:
			out = append(out, a)
		case !isDenial(err):
			return nil, fmt.Errorf("capability %s: %w", a, err)
		}
	}
	return out, nil
}
