package e2etest

import (
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
	syncdomain "bothy.example.com/server/internal/sync/domain"
)

// ReadModel is the test's own account of who may read what, kept beside the App while a test
// grants and revokes through the API: spec 04's rules written out plainly, the oracle of the
// property tests. A principal reads a channel (its threads and messages) with a grant on the
// channel, on its space or on the instance (the owner); a space with a grant on it, on the
// instance or on one of its channels; agents, principals and the instance always.
type ReadModel struct {
	Owner uuid.UUID
	// SpaceOf maps each channel to its space (uuid.Nil for a direct message).
	SpaceOf map[uuid.UUID]uuid.UUID
	// ThreadsOf lists the threads of each channel.
	ThreadsOf map[uuid.UUID][]uuid.UUID
	// Grants holds each principal's grants by resource (space or channel id): the grant's id.
	Grants map[uuid.UUID]map[uuid.UUID]uuid.UUID
	// Archived holds the archived spaces and channels.
	Archived map[uuid.UUID]bool
	Spaces   []uuid.UUID
	Channels []uuid.UUID
}

// NewReadModel returns an empty ReadModel of the instance whose owner is owner.
func NewReadModel(owner uuid.UUID) *ReadModel {
	return &ReadModel{
		Owner: owner, SpaceOf: map[uuid.UUID]uuid.UUID{}, ThreadsOf: map[uuid.UUID][]uuid.UUID{},
		Grants: map[uuid.UUID]map[uuid.UUID]uuid.UUID{}, Archived: map[uuid.UUID]bool{},
	}
}

func (m *ReadModel) addSpace(id uuid.UUID) { m.Spaces = append(m.Spaces, id) }

// AddChannel records a channel of the space (uuid.Nil for a direct message).
func (m *ReadModel) AddChannel(id, space uuid.UUID) {
	m.SpaceOf[id] = space
	m.Channels = append(m.Channels, id)
}

// AddThread records a thread of the channel.
func (m *ReadModel) AddThread(channel, thread uuid.UUID) {
	m.ThreadsOf[channel] = append(m.ThreadsOf[channel], thread)
}

// AddGrant records the principal's grant on the resource (a space or a channel).
func (m *ReadModel) AddGrant(principal, resource, grant uuid.UUID) {
	if m.Grants[principal] == nil {
		m.Grants[principal] = map[uuid.UUID]uuid.UUID{}
	}
	m.Grants[principal][resource] = grant
}

func (m *ReadModel) removeGrant(principal, resource uuid.UUID) {
	delete(m.Grants[principal], resource)
}

func (m *ReadModel) holds(principal, resource uuid.UUID) bool {
	_, ok := m.Grants[principal][resource]
	return ok
}

// readsChannel reports whether the principal may read the channel.
// A direct message (a channel of no space) only with a grant on it: it is private to its
// participants, the owner's role does not reach it (spec 04).
func (m *ReadModel) readsChannel(p, ch uuid.UUID) bool {
	sp := m.SpaceOf[ch]
	if sp == uuid.Nil {
		return m.holds(p, ch)
	}
	return p == m.Owner || m.holds(p, ch) || m.holds(p, sp)
}

// ReadsSpace reports whether the principal may read the space.
func (m *ReadModel) ReadsSpace(p, sp uuid.UUID) bool {
	if p == m.Owner || m.holds(p, sp) {
		return true
	}
	for ch, s := range m.SpaceOf {
		if s == sp && m.holds(p, ch) {
			return true
		}
	}
	return false
}

// Listed reports whether the channel belongs in the principal's snapshot: readable, not
// archived, in no archived space; a direct message only for its participants.
func (m *ReadModel) Listed(p, ch uuid.UUID) bool {
	if m.SpaceOf[ch] == uuid.Nil {
		return m.holds(p, ch) && !m.Archived[ch]
	}
	return m.readsChannel(p, ch) && !m.Archived[ch] && !m.Archived[m.SpaceOf[ch]]
}

// Receives reports whether the principal may receive the stored event now: a personal event
// only its audience; any other by its resource, which spec 02's receive actions read.
func (m *ReadModel) Receives(p uuid.UUID, e syncdomain.StoredEvent) bool {
	if e.Personal() {
		return e.AudienceID == p
	}
	switch e.ResourceKind {
	case kernel.ResourceSpace:
		return m.ReadsSpace(p, e.SpaceID)
	case kernel.ResourceChannel, kernel.ResourceThread, kernel.ResourceMessage:
		return m.readsChannel(p, e.ChannelID)
	}
	return true
}

// Pick returns a random element of list (the zero value for an empty one).
func Pick[T any](r *rand.Rand, list []T) T {
	var zero T
	if len(list) == 0 {
		return zero
	}
	return list[r.IntN(len(list))]
}

// RandomWrite sends one random write of a person's own data (a read state, a draft, a
// setting or a sidebar naming every channel, visible or not) and accepts every answer the
// contract allows: whether the person may write there is for the API to decide, and the log
// records what it did.
func (w *SyncWorld) RandomWrite(t *testing.T, r *rand.Rand, m *ReadModel, a Actor) {
	t.Helper()
	var resp int
	switch r.IntN(4) {
	case 0:
		ch := Pick(r, m.Channels)
		th := Pick(r, m.ThreadsOf[ch])
		if th == uuid.Nil {
			return
		}
		resp = w.Do(t, a, http.MethodPut, "/api/v1/threads/"+th.String()+"/read-state", `{"last_read_seq":`+strconv.Itoa(r.IntN(3))+`}`).Status
	case 1:
		ch := Pick(r, m.Channels)
		body := `{"content_md":"Draft ` + strconv.Itoa(r.IntN(100)) + `"}`
		if th := Pick(r, m.ThreadsOf[ch]); th != uuid.Nil && r.IntN(2) == 0 {
			body = `{"content_md":"Thread draft","thread_id":"` + th.String() + `"}`
		}
		resp = w.Do(t, a, http.MethodPut, "/api/v1/channels/"+ch.String()+"/draft", body).Status
	case 2:
		resp = w.Do(t, a, http.MethodPut, "/api/v1/me/settings/"+Pick(r, []string{"theme", "locale", "density"}), `{"value":`+strconv.Itoa(r.IntN(9))+`}`).Status
	default:
		ids := slices.Clone(m.Channels)
		r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		list := ""
		for i, id := range ids {
			if i > 0 {
				list += ","
			}
			list += `"` + id.String() + `"`
		}
		resp = w.Do(t, a, http.MethodPut, "/api/v1/me/sidebar", `{"sections":[{"key":"all","title":"All","collapsed":false,"channel_ids":[`+list+`]}]}`).Status
	}
	switch resp {
	case http.StatusOK, http.StatusNoContent, http.StatusForbidden, http.StatusNotFound, http.StatusConflict:
	default:
		t.Fatalf("a write of %s's own data answered %d", a.Name, resp)
	}
}
