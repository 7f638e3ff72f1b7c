package wire_test

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

// readModel is the test's own account of who may read what, kept beside the App while a test
// grants and revokes through the API: spec 04's rules written out plainly, the oracle of the
// property tests. A principal reads a channel (its threads and messages) with a grant on the
// channel, on its space or on the instance (the owner); a space with a grant on it, on the
// instance or on one of its channels; agents, principals and the instance always.
type readModel struct {
	owner uuid.UUID
	// spaceOf maps each channel to its space (uuid.Nil for a direct message).
	spaceOf map[uuid.UUID]uuid.UUID
	// threadsOf lists the threads of each channel.
	threadsOf map[uuid.UUID][]uuid.UUID
	// grants holds each principal's grants by resource (space or channel id): the grant's id.
	grants map[uuid.UUID]map[uuid.UUID]uuid.UUID
	// archived holds the archived spaces and channels.
	archived map[uuid.UUID]bool
	spaces   []uuid.UUID
	channels []uuid.UUID
}

func newReadModel(owner uuid.UUID) *readModel {
	return &readModel{
		owner: owner, spaceOf: map[uuid.UUID]uuid.UUID{}, threadsOf: map[uuid.UUID][]uuid.UUID{},
		grants: map[uuid.UUID]map[uuid.UUID]uuid.UUID{}, archived: map[uuid.UUID]bool{},
	}
}

func (m *readModel) addSpace(id uuid.UUID) { m.spaces = append(m.spaces, id) }

func (m *readModel) addChannel(id, space uuid.UUID) {
	m.spaceOf[id] = space
	m.channels = append(m.channels, id)
}

func (m *readModel) addThread(channel, thread uuid.UUID) {
	m.threadsOf[channel] = append(m.threadsOf[channel], thread)
}

func (m *readModel) addGrant(principal, resource, grant uuid.UUID) {
	if m.grants[principal] == nil {
		m.grants[principal] = map[uuid.UUID]uuid.UUID{}
	}
	m.grants[principal][resource] = grant
}

func (m *readModel) removeGrant(principal, resource uuid.UUID) {
	delete(m.grants[principal], resource)
}

func (m *readModel) holds(principal, resource uuid.UUID) bool {
	_, ok := m.grants[principal][resource]
	return ok
}

// readsChannel reports whether the principal may read the channel.
// A direct message (a channel of no space) only with a grant on it: it is private to its
// participants, the owner's role does not reach it (spec 04).
func (m *readModel) readsChannel(p, ch uuid.UUID) bool {
	sp := m.spaceOf[ch]
	if sp == uuid.Nil {
		return m.holds(p, ch)
	}
	return p == m.owner || m.holds(p, ch) || m.holds(p, sp)
}

// readsSpace reports whether the principal may read the space.
func (m *readModel) readsSpace(p, sp uuid.UUID) bool {
	if p == m.owner || m.holds(p, sp) {
		return true
	}
	for ch, s := range m.spaceOf {
		if s == sp && m.holds(p, ch) {
			return true
		}
	}
	return false
}

// listed reports whether the channel belongs in the principal's snapshot: readable, not
// archived, in no archived space; a direct message only for its participants.
func (m *readModel) listed(p, ch uuid.UUID) bool {
	if m.spaceOf[ch] == uuid.Nil {
		return m.holds(p, ch) && !m.archived[ch]
	}
	return m.readsChannel(p, ch) && !m.archived[ch] && !m.archived[m.spaceOf[ch]]
}

// receives reports whether the principal may receive the stored event now: a personal event
// only its audience; any other by its resource, which spec 02's receive actions read.
func (m *readModel) receives(p uuid.UUID, e syncdomain.StoredEvent) bool {
	if e.Personal() {
		return e.AudienceID == p
	}
	switch e.ResourceKind {
	case kernel.ResourceSpace:
		return m.readsSpace(p, e.SpaceID)
	case kernel.ResourceChannel, kernel.ResourceThread, kernel.ResourceMessage:
		return m.readsChannel(p, e.ChannelID)
	}
	return true
}

// pick returns a random element of list (the zero value for an empty one).
func pick[T any](r *rand.Rand, list []T) T {
	var zero T
	if len(list) == 0 {
		return zero
	}
	return list[r.IntN(len(list))]
}

// randomWrite sends one random write of a person's own data (a read state, a draft, a
// setting or a sidebar naming every channel, visible or not) and accepts every answer the
// contract allows: whether the person may write there is for the API to decide, and the log
// records what it did.
func (w *syncWorld) randomWrite(t *testing.T, r *rand.Rand, m *readModel, a worldActor) {
	t.Helper()
	var resp int
	switch r.IntN(4) {
	case 0:
		ch := pick(r, m.channels)
		th := pick(r, m.threadsOf[ch])
		if th == uuid.Nil {
			return
		}
		resp = w.do(t, a, http.MethodPut, "/api/v1/threads/"+th.String()+"/read-state", `{"last_read_seq":`+strconv.Itoa(r.IntN(3))+`}`).Status
	case 1:
		ch := pick(r, m.channels)
		body := `{"content_md":"Draft ` + strconv.Itoa(r.IntN(100)) + `"}`
		if th := pick(r, m.threadsOf[ch]); th != uuid.Nil && r.IntN(2) == 0 {
			body = `{"content_md":"Thread draft","thread_id":"` + th.String() + `"}`
		}
		resp = w.do(t, a, http.MethodPut, "/api/v1/channels/"+ch.String()+"/draft", body).Status
	case 2:
		resp = w.do(t, a, http.MethodPut, "/api/v1/me/settings/"+pick(r, []string{"theme", "locale", "density"}), `{"value":`+strconv.Itoa(r.IntN(9))+`}`).Status
	default:
		ids := slices.Clone(m.channels)
		r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		list := ""
		for i, id := range ids {
			if i > 0 {
				list += ","
			}
			list += `"` + id.String() + `"`
		}
		resp = w.do(t, a, http.MethodPut, "/api/v1/me/sidebar", `{"sections":[{"key":"all","title":"All","collapsed":false,"channel_ids":[`+list+`]}]}`).Status
	}
	switch resp {
	case http.StatusOK, http.StatusNoContent, http.StatusForbidden, http.StatusNotFound, http.StatusConflict:
	default:
		t.Fatalf("a write of %s's own data answered %d", a.name, resp)
	}
}
