// Package authz decides who may do what: the grants of roles to principals on the instance,
// spaces and channels (the instance owner included), the permission snapshot of a principal
// (Scope) and the one authorization decision every handler, catch-up and the gateway call
// (spec 04).
//
// This root package holds what the module offers to the rest of the server: the ports below
// and the values they exchange. The policy (which role each action needs on which resource)
// is one table in domain, the use cases live in app, the grants table in adapters/postgres and
// the grant operations in adapters/httpapi; see README.md.
package authz

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

// Role is what a grant lets its principal do on its resource and everything below it. The
// empty Role means no role.
type Role string

// The roles of spec 04, from least to most.
const (
	// RoleViewer reads.
	RoleViewer Role = "viewer"
	// RoleMember reads, posts, reacts and keeps personal data (read states, drafts).
	RoleMember Role = "member"
	// RoleAdmin is a member who also manages the resource and its grants.
	RoleAdmin Role = "admin"
	// RoleOwner may do everything; it exists only on the instance.
	RoleOwner Role = "owner"
)

// roles lists every role from least to most; Rank is the index plus one.
var roles = []Role{RoleViewer, RoleMember, RoleAdmin, RoleOwner}

// Roles returns every role from least to most (a copy).
func Roles() []Role {
	return slices.Clone(roles)
}

// Rank orders roles: 0 for no role (or an unknown one), then 1 viewer, 2 member, 3 admin,
// 4 owner, so that "at least" is a comparison.
func (r Role) Rank() int {
	return slices.Index(roles, r) + 1
}

// AtLeast reports whether r is floor or more; every role is at least the empty role.
func (r Role) AtLeast(floor Role) bool {
	return r.Rank() >= floor.Rank()
}

// Valid reports whether r is one of the roles.
func (r Role) Valid() bool {
	return r.Rank() > 0
}

// ValidOn reports whether a grant of r on a resource of kind may exist: viewer, member and
// admin on the instance, a space or a channel; owner on the instance only.
func (r Role) ValidOn(kind kernel.ResourceKind) bool {
	switch kind {
	case kernel.ResourceInstance:
		return r.Valid()
	case kernel.ResourceSpace, kernel.ResourceChannel:
		return r.Valid() && r != RoleOwner
	}
	return false
}

// maxRole returns the higher of two roles.
func maxRole(a, b Role) Role {
	if b.Rank() > a.Rank() {
		return b
	}
	return a
}

// GrantKinds returns the resource kinds a grant may be on: instance, space and channel.
func GrantKinds() []kernel.ResourceKind {
	return []kernel.ResourceKind{kernel.ResourceInstance, kernel.ResourceSpace, kernel.ResourceChannel}
}

// Grant gives one principal one role on the instance, a space or a channel.
type Grant struct {
	// ID identifies the grant (UUIDv7).
	ID uuid.UUID
	// PrincipalID is the grantee.
	PrincipalID uuid.UUID
	// ResourceKind is instance, space or channel.
	ResourceKind kernel.ResourceKind
	// ResourceID is the space or channel, or the instance's id for an instance grant.
	ResourceID uuid.UUID
	// Role is the role granted; owner only on the instance.
	Role Role
	// CreatedAt is when the grant was made, in UTC.
	CreatedAt time.Time
	// CreatedBy is the principal who made it.
	CreatedBy uuid.UUID
}

// GrantInput is a grant to make.
type GrantInput struct {
	// PrincipalID is the grantee.
	PrincipalID uuid.UUID
	// ResourceKind is instance, space or channel.
	ResourceKind kernel.ResourceKind
	// ResourceID is the space or channel; for the instance it is ignored (the grant is
	// stored with the instance's id).
	ResourceID uuid.UUID
	// Role is the role to grant.
	Role Role
}

// Scope is the permission snapshot of one principal at one permission_version (spec 04): what
// its grants let it see, as catch-up's prefilter and the per-row decisions need it. It is
// immutable and safe to share; the accessors return copies. Channels created later in a space
// the principal holds a grant on are covered without a new Scope (fully visible spaces), which
// is why creating a channel does not advance the permission version.
type Scope struct {
	principalID   uuid.UUID
	version       int64
	instanceRole  Role
	spaceRoles    map[uuid.UUID]Role
	channelRoles  map[uuid.UUID]Role
	channelSpaces map[uuid.UUID]uuid.UUID
	visibleSpaces map[uuid.UUID]bool

	visibleChannelIDs, visibleSpaceIDs, fullyVisibleSpaceIDs []uuid.UUID
}

// NewScope builds the Scope of principalID at version from its grants (grants of other
// principals are ignored) and the spaces of its granted channels (channelSpaces maps a channel
// to its space; a channel of no space, a direct message, is absent). The roles of several
// grants on one resource combine to the highest.
func NewScope(principalID uuid.UUID, version int64, grants []Grant, channelSpaces map[uuid.UUID]uuid.UUID) Scope {
	s := Scope{
		principalID:   principalID,
		version:       version,
		spaceRoles:    map[uuid.UUID]Role{},
		channelRoles:  map[uuid.UUID]Role{},
		channelSpaces: map[uuid.UUID]uuid.UUID{},
		visibleSpaces: map[uuid.UUID]bool{},
	}
	for _, g := range grants {
		if g.PrincipalID != principalID || !g.Role.ValidOn(g.ResourceKind) || g.ResourceID == uuid.Nil {
			continue
		}
		switch g.ResourceKind {
		case kernel.ResourceInstance:
			s.instanceRole = maxRole(s.instanceRole, g.Role)
		case kernel.ResourceSpace:
			s.spaceRoles[g.ResourceID] = maxRole(s.spaceRoles[g.ResourceID], g.Role)
			s.visibleSpaces[g.ResourceID] = true
		case kernel.ResourceChannel:
			s.channelRoles[g.ResourceID] = maxRole(s.channelRoles[g.ResourceID], g.Role)
			if sp, ok := channelSpaces[g.ResourceID]; ok && sp != uuid.Nil {
				s.channelSpaces[g.ResourceID] = sp
				s.visibleSpaces[sp] = true
			}
		}
	}
	s.visibleChannelIDs = sortedKeys(s.channelRoles)
	s.fullyVisibleSpaceIDs = sortedKeys(s.spaceRoles)
	s.visibleSpaceIDs = sortedKeys(s.visibleSpaces)
	return s
}

func sortedKeys[V any](m map[uuid.UUID]V) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	return out
}

// PrincipalID is the principal the Scope belongs to.
func (s Scope) PrincipalID() uuid.UUID { return s.principalID }

// PermissionVersion is the instance's permission_version the Scope was built at; the Scope is
// current exactly while the counter still has this value.
func (s Scope) PermissionVersion() int64 { return s.version }

// IsOwner reports whether the principal owns the instance (and so may do everything).
func (s Scope) IsOwner() bool { return s.instanceRole == RoleOwner }

// InstanceWide reports whether the principal holds a grant on the instance (owner included),
// which applies to every space and channel.
func (s Scope) InstanceWide() bool { return s.instanceRole != "" }

// InstanceRole is the principal's role on the instance; empty for none.
func (s Scope) InstanceRole() Role { return s.instanceRole }

// SpaceGrantRole is the role of the principal's grant on the space itself; empty for none.
// It does not include the instance role (see the policy in domain for inheritance).
func (s Scope) SpaceGrantRole(spaceID uuid.UUID) Role { return s.spaceRoles[spaceID] }

// ChannelGrantRole is the role of the principal's grant on the channel itself; empty for none.
func (s Scope) ChannelGrantRole(channelID uuid.UUID) Role { return s.channelRoles[channelID] }

// SpaceOfGrantedChannel returns the space of a channel the principal holds a grant on; ok is
// false for any other channel and for a channel of no space.
func (s Scope) SpaceOfGrantedChannel(channelID uuid.UUID) (uuid.UUID, bool) {
	sp, ok := s.channelSpaces[channelID]
	return sp, ok
}

// SpaceVisible reports whether the principal sees the space through its grants: a grant on it
// or on at least one of its channels. Instance-wide principals see every space besides.
func (s Scope) SpaceVisible(spaceID uuid.UUID) bool { return s.visibleSpaces[spaceID] }

// HasSpaceGrants reports whether the principal holds a grant on some space, the only case in
// which the space of a channel the caller did not name can change a decision.
func (s Scope) HasSpaceGrants() bool { return len(s.spaceRoles) > 0 }

// ManagesGrants reports whether the principal manages some grants: admin or owner on the
// instance, or admin of some space or channel.
func (s Scope) ManagesGrants() bool {
	if s.instanceRole.AtLeast(RoleAdmin) {
		return true
	}
	for _, r := range s.spaceRoles {
		if r.AtLeast(RoleAdmin) {
			return true
		}
	}
	for _, r := range s.channelRoles {
		if r.AtLeast(RoleAdmin) {
			return true
		}
	}
	return false
}

// VisibleChannelIDs are the channels the principal holds a grant on, sorted; channels seen
// through a space or instance grant are not listed (catch-up's prefilter covers them by
// FullyVisibleSpaceIDs and InstanceWide).
func (s Scope) VisibleChannelIDs() []uuid.UUID { return slices.Clone(s.visibleChannelIDs) }

// VisibleSpaceIDs are the spaces the principal sees, sorted: those it holds a grant on and
// those of the channels it holds a grant on.
func (s Scope) VisibleSpaceIDs() []uuid.UUID { return slices.Clone(s.visibleSpaceIDs) }

// FullyVisibleSpaceIDs are the spaces the principal holds a grant on, sorted: every channel
// in them, also one created later, is visible.
func (s Scope) FullyVisibleSpaceIDs() []uuid.UUID { return slices.Clone(s.fullyVisibleSpaceIDs) }

// pinnedKey keys the Scope WithScope pins in a context.
type pinnedKey struct{}

// WithScope returns a context in which an Authorizer uses s for s's principal instead of
// reading the permission_version and looking up its current Scope: Scope returns s, and
// Authorize, ForActor and MayRead decide with it. A read-only operation that must be filtered
// by one Scope throughout pins the Scope it read once, so the modules it asks (chat's
// listings, the agents) decide with the same grants without a query each; the snapshot pins
// the Scope it reads after its head. Other principals are unaffected, and inside a
// transaction the pin is ignored (a write decides with the grants as they stand).
func WithScope(ctx context.Context, s Scope) context.Context {
	return context.WithValue(ctx, pinnedKey{}, s)
}

// PinnedScope returns the Scope WithScope pinned in ctx when it belongs to principalID.
func PinnedScope(ctx context.Context, principalID uuid.UUID) (Scope, bool) {
	s, ok := ctx.Value(pinnedKey{}).(Scope)
	if !ok || s.principalID != principalID || principalID == uuid.Nil {
		return Scope{}, false
	}
	return s, true
}

// versionKey keys the permission_version WithPermissionVersion puts in a context.
type versionKey struct{}

// WithPermissionVersion returns a context in which an Authorizer takes v as the current
// permission_version instead of reading it: a Scope cached with that version is current, and
// one built from the grants is tagged with it. For a read-only caller that read the counter a
// moment ago in a round trip it made anyway (catch-up's check reads it with the head), so its
// page does not read it again. Inside a transaction it is ignored, like a pinned Scope.
func WithPermissionVersion(ctx context.Context, v int64) context.Context {
	return context.WithValue(ctx, versionKey{}, v)
}

// KnownPermissionVersion returns the permission_version WithPermissionVersion put in ctx.
func KnownPermissionVersion(ctx context.Context) (int64, bool) {
	v, ok := ctx.Value(versionKey{}).(int64)
	return v, ok
}

// Authorizer is the authorization port of the module: the decision of spec 04
// (authorize.Authorizer) plus the Scope behind it, for catch-up and the snapshot.
type Authorizer interface {
	authorize.Authorizer
	// Scope returns the permission snapshot of the principal: the one WithScope pinned in
	// ctx for it (outside a transaction), else from the per-process cache while its
	// permission_version is current, else built anew (one query for the grants and one to the
	// channel directory). It authorizes nothing.
	Scope(ctx context.Context, principalID uuid.UUID) (Scope, error)
	// ForActor returns a Decider bound to the actor in ctx and its current Scope, for many
	// decisions (catch-up rows, list items) without a query per decision.
	// problem.ErrUnauthenticated without an actor.
	ForActor(ctx context.Context) (Decider, error)
	// MayRead reports whether the grants of a principal who need not be the actor let it
	// read res (the read action of res's kind, as the policy's visibility rule decides),
	// ignoring app scopes and devices, which belong to tokens, not principals: whether a
	// mentioned principal can see the message at all. res's space is looked up like
	// Authorize does when the caller left it out. It uses the Scope cache, authorizes nothing
	// and audits nothing.
	MayRead(ctx context.Context, principalID uuid.UUID, res authorize.Resource) (bool, error)
}

// Decider decides for one actor against one Scope snapshot; it is short-lived (one request or
// one page).
type Decider interface {
	// Scope is the snapshot the Decider decides against.
	Scope() Scope
	// Authorize decides like authorize.Authorizer.Authorize, for the bound actor (the actor
	// in ctx is not consulted) and without rechecking the permission version. A denial is
	// audited unless authorize.IsFilter(ctx).
	Authorize(ctx context.Context, action kernel.Action, res authorize.Resource) error
	// Level is the bound actor's effective role on res: the highest of its grants on the
	// instance, on res's space and on res's channel, as far as res has them (owner for an
	// owner); empty for none. It reads only the Scope, so the caller fills res's ancestors
	// (SpaceID, ChannelID) from the row it loaded. Views show it so that a client can tell a
	// viewer from a member from an admin.
	Level(res authorize.Resource) Role
}

// Grants makes, revokes and lists grants for other modules (direct-message participants, the
// owner bootstrap). It authorizes nothing: the caller has decided. Each change runs in the
// caller's transaction when there is one (else its own), advances permission_version in the
// commit phase and appends grant.created or grant.revoked and permissions.changed, both to the
// grantee; the events' actor is the actor in ctx (problem.ErrUnauthenticated without one).
type Grants interface {
	// Grant makes the grant and returns it. A problem.ErrValidation for a role not valid on
	// the kind, problem.ErrConflict when the principal already holds a grant on the resource
	// or when the resource is a direct message the principal does not take part in (spec 04).
	Grant(ctx context.Context, in GrantInput) (Grant, error)
	// Revoke removes the grant and returns what it was; problem.ErrNotFound when there is
	// none, problem.ErrConflict for the instance's last owner grant.
	Revoke(ctx context.Context, grantID uuid.UUID) (Grant, error)
	// List returns the grants of the principal, or every grant for uuid.Nil, ordered by id.
	List(ctx context.Context, principalID uuid.UUID) ([]Grant, error)
}

// Reader is a principal whose grants let it read a channel, with the highest role of those
// grants.
type Reader struct {
	// PrincipalID is the principal.
	PrincipalID uuid.UUID
	// Role is the highest role of its grants that reach the channel.
	Role Role
}

// Readers lists who can read a channel by their grants, the question a channel's member list
// asks (spec 04: a grant on the instance reaches every standard channel, one on a space every
// channel in it, one on a channel the channel; no instance or space grant reaches a direct
// message). It authorizes nothing: the caller has decided channel.read.
type Readers interface {
	// ChannelReaders returns at most limit readers of the channel with a principal id above
	// after (uuid.Nil: from the start), in principal id order, in one query. spaceID is the
	// channel's space; uuid.Nil for a direct message, whose readers are the holders of a
	// grant on the channel itself (its participants).
	ChannelReaders(ctx context.Context, spaceID, channelID, after uuid.UUID, limit int) ([]Reader, error)
}

// ErrOwnerExists refuses a bootstrap on an instance that has an owner already (a
// problem.ErrConflict).
var ErrOwnerExists = problem.New(problem.ErrConflict, "The instance has an owner already; bootstrap runs only once.")

// Owners creates the instance's first owner: the one way into an instance nobody can reach
// yet (bothy admin bootstrap, bothy serve --bootstrap-owner, the demo). It authorizes nothing:
// whoever holds the database holds the instance.
type Owners interface {
	// Bootstrap creates a person with the display name, handle and email, an owner grant on
	// the instance and a token (without a device) in one transaction, and returns the
	// person's id and the token, which exists only in this result. ErrOwnerExists when the
	// instance has an owner, also one a concurrent bootstrap just created; identity's
	// validation errors (naming display_name, handle, email) for bad input.
	Bootstrap(ctx context.Context, name, handle, email string) (uuid.UUID, identity.Secret, error)
}
