package e2etest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/wiretest"
)

// WriteUntil writes as the owner and as Sam until stop is closed, counting its writes: a
// message in the campaign thread, Sam's setting counter, a channel in Marketing, in turn.
// It runs beside the test's goroutine, so it reports a failed or invalid answer as its
// error instead of failing the test.
func (w *SyncWorld) WriteUntil(base string, stop <-chan struct{}, writes *atomic.Int64) error {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return nil
		default:
		}
		as, method, path, body := w.Owner, http.MethodPost, "/api/v1/threads/"+w.CampaignThread.String()+"/messages", fmt.Sprintf(`{"content_md":"Update %d"}`, i)
		switch i % 3 {
		case 1:
			as, method, path, body = w.Sam, http.MethodPut, "/api/v1/me/settings/counter", fmt.Sprintf(`{"value":%d}`, i)
		case 2:
			path, body = "/api/v1/spaces/"+w.Marketing.String()+"/channels", fmt.Sprintf(`{"name":"launch-%d"}`, i)
		}
		req, err := http.NewRequestWithContext(context.Background(), method, base+path, strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+as.Token)
		resp, err := w.Env.Server.Client().Do(req)
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		got, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return err
		}
		if err := wiretest.Validate(context.Background(), req, resp.StatusCode, resp.Header, got); err != nil {
			return fmt.Errorf("%s %s breaks the contract: %w", method, path, err)
		}
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("%s %s = %d: %s", method, path, resp.StatusCode, got)
		}
		writes.Add(1)
	}
}

// RandomStructure creates two or three spaces with one to three channels each, each channel
// with a thread by the owner.
func (w *SyncWorld) RandomStructure(t *testing.T, r *rand.Rand, m *ReadModel, people []Actor) {
	t.Helper()
	for s := range 2 + r.IntN(2) {
		sp := w.Space(t, fmt.Sprintf("Space %d", s))
		m.addSpace(sp)
		for c := range 1 + r.IntN(3) {
			ch := w.Channel(t, w.Owner, sp, fmt.Sprintf("channel-%d", c))
			m.AddChannel(ch, sp)
			m.AddThread(ch, w.Thread(t, w.Owner, ch, "@"+strings.ToLower(Pick(r, people).Name)+" welcome").Id)
		}
	}
}

// RandomGrant gives a random person a viewer or member grant on a random space or channel
// it holds no grant on yet.
func (w *SyncWorld) RandomGrant(t *testing.T, r *rand.Rand, m *ReadModel, people []Actor) {
	t.Helper()
	a := Pick(r, people)
	kind, res := "space", Pick(r, m.Spaces)
	if r.IntN(2) == 0 {
		kind, res = "channel", Pick(r, m.Channels)
		if m.SpaceOf[res] == uuid.Nil {
			return
		}
	}
	if m.holds(a.ID, res) {
		return
	}
	m.AddGrant(a.ID, res, w.Grant(t, a, kind, res, Pick(r, []string{"viewer", "member"})))
}

// RandomRevoke revokes a random grant of a random person made by RandomGrant.
func (w *SyncWorld) RandomRevoke(t *testing.T, r *rand.Rand, m *ReadModel, people []Actor) {
	t.Helper()
	a := Pick(r, people)
	var held []uuid.UUID
	for res, g := range m.Grants[a.ID] {
		if g != uuid.Nil {
			held = append(held, res)
		}
	}
	slices.SortFunc(held, func(x, y uuid.UUID) int { return bytes.Compare(x[:], y[:]) })
	if len(held) == 0 {
		return
	}
	res := Pick(r, held)
	w.Revoke(t, m.Grants[a.ID][res])
	m.removeGrant(a.ID, res)
}

// RandomPost posts, as the owner, into a random thread of a channel that is not archived,
// mentioning a random person.
func (w *SyncWorld) RandomPost(t *testing.T, r *rand.Rand, m *ReadModel) {
	t.Helper()
	ch := Pick(r, m.Channels)
	if m.Archived[ch] || m.SpaceOf[ch] == uuid.Nil {
		return
	}
	w.Post(t, w.Owner, Pick(r, m.ThreadsOf[ch]), "@"+Pick(r, []string{"alex", "sam", "robin"})+" news")
}
