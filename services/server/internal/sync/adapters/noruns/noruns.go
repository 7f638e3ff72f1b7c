// Package noruns binds the snapshot's outgoing port app.RunSummarySource while runs do not
// exist yet: no module starts agent runs, so no run is ever in progress and every snapshot's
// active_runs is empty. Wire binds it until the runs module exists; that module's issue binds
// its own port instead and deletes this package.
package noruns

import (
	"context"

	syncmod "bothy.example.com/server/internal/sync"
)

// Source answers that no run is in progress. The zero value is ready to use.
type Source struct{}

// New returns a Source.
func New() Source { return Source{} }

// ActiveRuns returns an empty list, never nil (the API has no null), and never an error:
// runs do not exist yet.
func (Source) ActiveRuns(context.Context) ([]syncmod.RunSummary, error) {
	return []syncmod.RunSummary{}, nil
}
