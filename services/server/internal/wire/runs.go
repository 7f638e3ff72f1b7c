package wire

import (
	"context"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	agentsapp "bothy.example.com/server/internal/agents/app"
	"bothy.example.com/server/internal/chat"
	syncmod "bothy.example.com/server/internal/sync"
	syncapp "bothy.example.com/server/internal/sync/app"
)

// chatThreadPlaces binds the runs' ThreadPlaces port to chat's Threads.Get and Channels.Get:
// where the thread of a new run lies and whether its channel is archived (chat refuses posts
// there by the same rule). It authorizes nothing; the runs use cases do.
type chatThreadPlaces struct {
	threads  chat.Threads
	channels chat.Channels
}

var _ agentsapp.ThreadPlaces = chatThreadPlaces{}

// Thread implements agentsapp.ThreadPlaces; problem.ErrNotFound from chat when there is no
// such thread.
func (p chatThreadPlaces) Thread(ctx context.Context, id uuid.UUID) (agentsapp.ThreadPlace, error) {
	t, err := p.threads.Get(ctx, id)
	if err != nil {
		return agentsapp.ThreadPlace{}, err
	}
	ch, err := p.channels.Get(ctx, t.ChannelID)
	if err != nil {
		return agentsapp.ThreadPlace{}, err
	}
	return agentsapp.ThreadPlace{ThreadID: t.ID, ChannelID: t.ChannelID, SpaceID: t.SpaceID, Archived: !ch.ArchivedAt.IsZero()}, nil
}

// runSummaries binds the snapshot's RunSummarySource to the agents module's runs in
// progress, which are filtered by thread.read for the actor in ctx.
type runSummaries struct{ runs agents.Runs }

var _ syncapp.RunSummarySource = runSummaries{}

// ActiveRuns implements syncapp.RunSummarySource.
func (r runSummaries) ActiveRuns(ctx context.Context) ([]syncmod.RunSummary, error) {
	runs, err := r.runs.InProgress(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]syncmod.RunSummary, len(runs))
	for i, run := range runs {
		out[i] = syncmod.RunSummary{
			ID: run.ID, AgentID: run.AgentID, ThreadID: run.ThreadID, ChannelID: run.ChannelID,
			RequestedBy: run.RequestedBy, InvocationID: run.InvocationID, State: run.State, Progress: run.Progress,
			Version: run.Version, CreatedAt: run.CreatedAt, UpdatedAt: run.UpdatedAt,
		}
	}
	return out, nil
}
