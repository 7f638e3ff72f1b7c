package nochat_test

import (
	"testing"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"bothy.example.com/server/internal/authz/adapters/nochat"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestNothingExists(t *testing.T) {
	t.Parallel()
	d := nochat.Directory{}
	id := uuid.New()
	if ok, err := d.ChannelExists(t.Context(), id); ok || err != nil {
		t.Errorf("ChannelExists = %v, %v; want false, nil", ok, err)
	}
	if ok, err := d.SpaceExists(t.Context(), id); ok || err != nil {
		t.Errorf("SpaceExists = %v, %v; want false, nil", ok, err)
	}
	m, err := d.SpacesOfChannels(t.Context(), []uuid.UUID{id})
	if err != nil || m == nil || len(m) != 0 {
		t.Errorf("SpacesOfChannels = %v, %v; want an empty map", m, err)
	}
}
