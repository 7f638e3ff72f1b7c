// Package authorize is the decision port every handler, catch-up and the gateway call before
// they act or deliver: "may the actor in this context do this action on this resource?". It
// lives in the kernel so that every module asks the same question in the same words without
// importing the authz module, which implements the port and is bound by the composition root.
package authorize

import (
	"context"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
)

// Resource names what an action is authorized against: its kind, its id and, where the caller
// knows them, its ancestors (a message's thread, channel and space; a thread's channel and
// space; a channel's space). Permissions are inherited along the ancestors (spec 04), so a
// caller fills them from the row it already loaded; uuid.Nil means unknown or absent (a
// direct-message channel lies in no space).
type Resource struct {
	// Kind is the resource kind; the policy of the authz module decides per (action, kind).
	Kind kernel.ResourceKind
	// ID is the resource's id; uuid.Nil for the instance and for a resource about to be
	// created.
	ID uuid.UUID
	// SpaceID, ChannelID and ThreadID are the ancestors, uuid.Nil where unknown or absent.
	SpaceID, ChannelID, ThreadID uuid.UUID
	// Direct is true for a direct-message channel, or a thread or message in one: a direct
	// message is private to its participants, so only a grant on the channel reaches it, no
	// instance role (spec 04). A caller that does not know may leave it false: the authorizer
	// finds it out for a channel named without its space when an instance role could
	// otherwise decide.
	Direct bool
}

// String names the resource for log lines: its kind and, when set, its id. It never holds
// anything but ids.
func (r Resource) String() string {
	if r.ID == uuid.Nil {
		return string(r.Kind)
	}
	return string(r.Kind) + " " + r.ID.String()
}

// ResourceFromEvent builds the resource of an event row (its resource kind and id and its
// space, channel and thread ids). Catch-up and the gateway both use it, so a stored event is
// authorized alike on every transport. An event of a channel, thread or message carries its
// space unless the channel is a direct message (spec 02), so such an event without a space is
// Direct.
func ResourceFromEvent(kind kernel.ResourceKind, id, spaceID, channelID, threadID uuid.UUID) Resource {
	r := Resource{Kind: kind, ID: id, SpaceID: spaceID, ChannelID: channelID, ThreadID: threadID}
	channel := channelID
	if kind == kernel.ResourceChannel && channel == uuid.Nil {
		channel = id
	}
	switch kind {
	case kernel.ResourceChannel, kernel.ResourceThread, kernel.ResourceMessage:
		r.Direct = spaceID == uuid.Nil && channel != uuid.Nil
	}
	return r
}

// Instance returns the instance as a resource, for instance-wide actions (instance.read,
// events.catch_up, space.create, ...).
func Instance() Resource {
	return Resource{Kind: kernel.ResourceInstance}
}

type filterKey struct{}

// Filter returns a context in which authorization runs in filter mode: a denial only drops a
// row the actor may not see (catch-up, list filtering), so it is not audited. Every other
// result is the same as in normal mode.
func Filter(ctx context.Context) context.Context {
	return context.WithValue(ctx, filterKey{}, true)
}

// IsFilter reports whether ctx, or a context it derives from, was made by Filter.
func IsFilter(ctx context.Context) bool {
	v, _ := ctx.Value(filterKey{}).(bool)
	return v
}

// Authorizer is the single decision function of spec 04. The authz module implements it; the
// composition root hands it to every module.
type Authorizer interface {
	// Authorize decides for the actor in ctx (kernel/actor): nil means allowed. Default deny.
	// The errors are problem kinds: problem.ErrUnauthenticated without an actor;
	// problem.ErrDevicePending for an actor whose device awaits approval (every action);
	// problem.ErrNotFound when the actor may not read the resource, so that its existence
	// never leaks (the same answer as for a resource that does not exist);
	// problem.ErrForbidden when it may read the resource but not do this. Any other error is
	// unexpected (the permission data could not be read). A denial is audited (a log line
	// and a metric) unless IsFilter(ctx).
	Authorize(ctx context.Context, action kernel.Action, res Resource) error
}
