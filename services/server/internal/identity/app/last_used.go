package app

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
)

// lastUsed is the in-memory record of tokens' last uses since the previous flush: one entry
// per token, so its size is bounded by the tokens used in one interval, whatever the request
// rate.
type lastUsed struct {
	mu   sync.Mutex
	uses map[uuid.UUID]time.Time
}

func newLastUsed() *lastUsed {
	return &lastUsed{uses: map[uuid.UUID]time.Time{}}
}

// touch records a use of the token at at, keeping the latest.
func (l *lastUsed) touch(id uuid.UUID, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if prev, ok := l.uses[id]; !ok || at.After(prev) {
		l.uses[id] = at
	}
}

// take empties the record and returns what it held, sorted by token id so that a flush's
// statement does not depend on map order.
func (l *lastUsed) take() []TokenUse {
	l.mu.Lock()
	uses := l.uses
	l.uses = map[uuid.UUID]time.Time{}
	l.mu.Unlock()
	out := make([]TokenUse, 0, len(uses))
	for id, at := range uses {
		out = append(out, TokenUse{TokenID: id, At: at})
	}
	slices.SortFunc(out, func(a, b TokenUse) int { return slices.Compare(a.TokenID[:], b.TokenID[:]) })
	return out
}

// putBack returns uses a failed flush could not write, so the next flush writes them.
func (l *lastUsed) putBack(uses []TokenUse) {
	for _, u := range uses {
		l.touch(u.TokenID, u.At)
	}
}

// Flush writes every last use recorded since the previous flush, in one statement. Uses that
// fail to be written are kept for the next flush. With nothing recorded it does not query.
func (s *Service) Flush(ctx context.Context) error {
	uses := s.lastUsed.take()
	if len(uses) == 0 {
		return nil
	}
	if err := s.store.TouchTokens(ctx, uses); err != nil {
		s.lastUsed.putBack(uses)
		return fmt.Errorf("identity: flush last use of %d tokens: %w", len(uses), err)
	}
	return nil
}

// Run flushes the last uses every identity.last_used_flush_interval until ctx ends, then
// flushes once more (bounded by identity.last_used_final_flush_timeout) so that a stopping process loses nothing it
// recorded, and returns nil. A failed flush is logged and retried at the next tick. Run one per
// process, beside the HTTP server that authenticates.
func (s *Service) Run(ctx context.Context) error {
	ticks, stop := s.newTicker(s.interval)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.finalFlushTimeout)
			defer cancel()
			s.flushLogged(fctx)
			return nil
		case <-ticks:
			s.flushLogged(ctx)
		}
	}
}

func (s *Service) flushLogged(ctx context.Context) {
	if err := s.Flush(ctx); err != nil {
		s.logger.ErrorContext(ctx, "flush token last use", "error", err.Error())
	}
}

// systemTicker is the production ticker of Run.
func systemTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}
