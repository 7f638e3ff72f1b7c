// Package nochat is the channel directory of an instance without the chat module: it
// truthfully reports that no space and no channel exist, so space and channel grants answer
// not_found and every Scope has no visible space. The composition root binds app.ChannelDirectory
// to it until the chat module implements the port (issue 5).
package nochat

import (
	"context"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz/app"
)

// Directory implements app.ChannelDirectory with no spaces and no channels.
type Directory struct{}

var _ app.ChannelDirectory = Directory{}

// SpacesOfChannels implements app.ChannelDirectory: no channel lies in a space.
func (Directory) SpacesOfChannels(context.Context, []uuid.UUID) (map[uuid.UUID]uuid.UUID, error) {
	return map[uuid.UUID]uuid.UUID{}, nil
}

// ChannelExists implements app.ChannelDirectory: no channel exists.
func (Directory) ChannelExists(context.Context, uuid.UUID) (bool, error) { return false, nil }

// SpaceExists implements app.ChannelDirectory: no space exists.
func (Directory) SpaceExists(context.Context, uuid.UUID) (bool, error) { return false, nil }
