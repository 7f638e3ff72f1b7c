package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/kernel/tx"
)

// The event types a grant change appends (spec 02), both personal to the grantee.
const (
	// EventGrantCreated is appended by every new grant.
	EventGrantCreated = "grant.created"
	// EventGrantRevoked is appended by every revoked grant.
	EventGrantRevoked = "grant.revoked"
	// EventPermissionsChanged tells the grantee that what it may see changed: its client
	// reloads its snapshot.
	EventPermissionsChanged = "permissions.changed"
)

// Errors of the grant use cases besides the problem kinds of the stores.
var (
	// ErrLastOwner refuses to revoke the instance's last owner grant: nobody could manage the
	// instance any more.
	ErrLastOwner = problem.New(problem.ErrConflict, "This is the last owner grant of the instance; grant another owner first.")
	// ErrOwnerOnly refuses a non-owner who grants or revokes the owner role.
	ErrOwnerOnly = problem.New(problem.ErrForbidden, "Only an owner may grant or revoke the owner role.")
	// ErrDirectMessagePrivate refuses a grant on a direct message to a principal who does not
	// take part in it: a direct message is private to its participants (spec 04), whoever
	// grants, the owner included.
	ErrDirectMessagePrivate = problem.New(problem.ErrConflict,
		"A direct message is private to its participants: nobody else can be granted a role on it.")
)

// GrantsDeps are the collaborators of Grants, all required.
type GrantsDeps struct {
	// Runner runs each change in one transaction.
	Runner TxRunner
	// Store keeps the grants.
	Store GrantStore
	// Counters advances permission_version in the commit phase.
	Counters instance.Counters
	// Appender appends the grant events.
	Appender kernel.Appender
	// Instance gives the instance id instance grants are stored with.
	Instance InstanceInfo
	// Directory tells whether a space or channel exists and a channel's space.
	Directory ChannelDirectory
	// Principals tells whether a grantee exists.
	Principals identity.Directory
	// Authorizer decides for the administrative use cases (CreateGrant, RevokeGrant,
	// ListGrants).
	Authorizer authz.Authorizer
	// PageSize is authz.grants_page_size: the default and the cap of ListGrants' limit.
	PageSize int
	// Floor, when set, is raised to every permission_version a change commits (the
	// Authorizer's, see VersionFloor).
	Floor *VersionFloor
}

// Grants implements authz.Grants (Grant, Revoke, List, which authorize nothing) and the
// administrative use cases behind the grant operations (CreateGrant, RevokeGrant, ListGrants,
// which authorize the actor in ctx).
type Grants struct {
	runner     TxRunner
	store      GrantStore
	counters   instance.Counters
	appender   kernel.Appender
	instance   InstanceInfo
	directory  ChannelDirectory
	principals identity.Directory
	authorizer authz.Authorizer
	pageSize   int
	floor      *VersionFloor
}

var _ authz.Grants = (*Grants)(nil)

// NewGrants returns the grant use cases over deps; it fails for a missing dependency or a
// page size below 1.
func NewGrants(deps GrantsDeps) (*Grants, error) {
	var errs []error
	for name, missing := range map[string]bool{
		"runner": deps.Runner == nil, "store": deps.Store == nil, "counters": deps.Counters == nil,
		"appender": deps.Appender == nil, "instance": deps.Instance == nil, "directory": deps.Directory == nil,
		"principals": deps.Principals == nil, "authorizer": deps.Authorizer == nil,
	} {
		if missing {
			errs = append(errs, fmt.Errorf("%s is nil", name))
		}
	}
	if deps.PageSize < 1 {
		errs = append(errs, fmt.Errorf("page size %d: must be at least 1", deps.PageSize))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("authz: new grants: %w", err)
	}
	return &Grants{
		runner: deps.Runner, store: deps.Store, counters: deps.Counters, appender: deps.Appender,
		instance: deps.Instance, directory: deps.Directory, principals: deps.Principals,
		authorizer: deps.Authorizer, pageSize: deps.PageSize, floor: deps.Floor,
	}, nil
}

// Validate checks a grant to make and names every offending field: principal_id is required,
// resource_kind is instance, space or channel, resource_id is required unless the kind is
// instance, and role is one of the roles valid on the kind (owner on the instance only).
func Validate(in authz.GrantInput) error {
	var fields []problem.FieldError
	if in.PrincipalID == uuid.Nil {
		fields = append(fields, problem.FieldError{Field: "principal_id", Message: "is required"})
	}
	kindOK := false
	for _, k := range authz.GrantKinds() {
		kindOK = kindOK || in.ResourceKind == k
	}
	switch {
	case !kindOK:
		fields = append(fields, problem.FieldError{Field: "resource_kind", Message: "must be instance, space or channel"})
	case in.ResourceKind != kernel.ResourceInstance && in.ResourceID == uuid.Nil:
		fields = append(fields, problem.FieldError{Field: "resource_id", Message: "is required for a space or channel grant"})
	}
	switch {
	case !in.Role.Valid():
		fields = append(fields, problem.FieldError{Field: "role", Message: "must be viewer, member, admin or owner"})
	case kindOK && !in.Role.ValidOn(in.ResourceKind):
		fields = append(fields, problem.FieldError{Field: "role", Message: "owner is a role on the instance only"})
	}
	if len(fields) > 0 {
		return problem.Validation(fields...)
	}
	return nil
}

// Grant implements authz.Grants. A channel grant on a direct message to a principal who does
// not take part in it is refused with ErrDirectMessagePrivate, whatever the caller: this is
// the one place every grant passes (createGrant, the participants' grants of a new direct
// message), so no path can open a direct message to a third party.
func (g *Grants) Grant(ctx context.Context, in authz.GrantInput) (authz.Grant, error) {
	who, ok := actor.From(ctx)
	if !ok {
		return authz.Grant{}, fmt.Errorf("authz: grant: %w", problem.ErrUnauthenticated)
	}
	if err := Validate(in); err != nil {
		return authz.Grant{}, fmt.Errorf("authz: grant: %w", err)
	}
	var out authz.Grant
	err := g.runner.RunInTx(ctx, func(ctx context.Context) error {
		resourceID := in.ResourceID
		if in.ResourceKind == kernel.ResourceInstance {
			info, err := g.instance.Info(ctx)
			if err != nil {
				return err
			}
			resourceID = info.ID
		}
		if in.Role == authz.RoleOwner {
			if _, err := g.store.LockOwners(ctx); err != nil {
				return err
			}
		}
		if in.ResourceKind == kernel.ResourceChannel {
			direct, participant, err := g.directory.DirectParticipant(ctx, resourceID, in.PrincipalID)
			if err != nil {
				return err
			}
			if direct && !participant {
				return ErrDirectMessagePrivate
			}
		}
		stored, err := g.store.Insert(ctx, authz.Grant{
			ID: ids.New(), PrincipalID: in.PrincipalID, ResourceKind: in.ResourceKind,
			ResourceID: resourceID, Role: in.Role, CreatedBy: who.PrincipalID,
		})
		if err != nil {
			return err
		}
		out = stored
		return g.changed(ctx, who.PrincipalID, EventGrantCreated, stored)
	})
	if err != nil {
		return authz.Grant{}, fmt.Errorf("authz: grant: %w", err)
	}
	return out, nil
}

// Revoke implements authz.Grants.
func (g *Grants) Revoke(ctx context.Context, grantID uuid.UUID) (authz.Grant, error) {
	who, ok := actor.From(ctx)
	if !ok {
		return authz.Grant{}, fmt.Errorf("authz: revoke: %w", problem.ErrUnauthenticated)
	}
	var out authz.Grant
	err := g.runner.RunInTx(ctx, func(ctx context.Context) error {
		gone, err := g.store.Delete(ctx, grantID)
		if err != nil {
			return err
		}
		if gone.Role == authz.RoleOwner {
			// Counted after the lock: a concurrent revoke of another owner has committed (and
			// is counted) or waits for this transaction, so two cannot both remove the last.
			owners, err := g.store.LockOwners(ctx)
			if err != nil {
				return err
			}
			if owners == 0 {
				return ErrLastOwner
			}
		}
		out = gone
		return g.changed(ctx, who.PrincipalID, EventGrantRevoked, gone)
	})
	if err != nil {
		return authz.Grant{}, fmt.Errorf("authz: revoke: %w", err)
	}
	return out, nil
}

// List implements authz.Grants.
func (g *Grants) List(ctx context.Context, principalID uuid.UUID) ([]authz.Grant, error) {
	var out []authz.Grant
	after := uuid.Nil
	for {
		page, err := g.store.Page(ctx, principalID, after, g.pageSize)
		if err != nil {
			return nil, fmt.Errorf("authz: list grants: %w", err)
		}
		out = append(out, page...)
		if len(page) < g.pageSize {
			return out, nil
		}
		after = page[len(page)-1].ID
	}
}

// changed queues the commit-phase work of one grant change: advance permission_version
// (before the appender's event_seq, the lock order) and append the grant event and
// permissions.changed with the new version, both to the grantee.
func (g *Grants) changed(ctx context.Context, actorID uuid.UUID, typ string, gr authz.Grant) error {
	return tx.OnCommitPhase(ctx, func(ctx context.Context) error {
		version, err := g.counters.AdvancePermissionVersion(ctx)
		if err != nil {
			return err
		}
		if err := tx.AfterCommit(ctx, func(context.Context) { g.floor.Raise(version) }); err != nil {
			return err
		}
		return g.appender.Append(ctx, grantEvent(typ, actorID, gr), permissionsChanged(actorID, gr.PrincipalID, version))
	})
}

// grantPayload is the payload of grant.created and grant.revoked (spec 02).
type grantPayload struct {
	GrantID      uuid.UUID `json:"grant_id"`
	PrincipalID  uuid.UUID `json:"principal_id"`
	ResourceKind string    `json:"resource_kind"`
	ResourceID   uuid.UUID `json:"resource_id,omitzero"` // absent for the instance
	Role         string    `json:"role"`
}

func grantEvent(typ string, actorID uuid.UUID, gr authz.Grant) kernel.Event {
	resourceID := gr.ResourceID
	if gr.ResourceKind == kernel.ResourceInstance {
		resourceID = uuid.Nil
	}
	return kernel.Event{
		Type: typ, ActorID: actorID,
		ResourceKind: kernel.ResourceGrant, ResourceID: gr.ID, AudienceID: gr.PrincipalID,
		Payload: grantPayload{
			GrantID: gr.ID, PrincipalID: gr.PrincipalID, ResourceKind: string(gr.ResourceKind),
			ResourceID: resourceID, Role: string(gr.Role),
		},
	}
}

// permissionsPayload is the payload of permissions.changed.
type permissionsPayload struct {
	PrincipalID       uuid.UUID `json:"principal_id"`
	PermissionVersion int64     `json:"permission_version"`
}

func permissionsChanged(actorID, principalID uuid.UUID, version int64) kernel.Event {
	return kernel.Event{
		Type: EventPermissionsChanged, ActorID: actorID,
		ResourceKind: kernel.ResourcePrincipal, ResourceID: principalID, AudienceID: principalID,
		Payload: permissionsPayload{PrincipalID: principalID, PermissionVersion: version},
	}
}

// CreateGrant makes a grant for the actor in ctx, who must hold grant.admin on the grant's
// target (the instance, the space, or the channel); granting the owner role takes an owner.
// The target must exist (problem.ErrNotFound, like a target the actor cannot see) and the
// grantee too (a validation error naming principal_id). The grant operation's handler has
// already authorized grant.admin on the grant collection.
func (g *Grants) CreateGrant(ctx context.Context, in authz.GrantInput) (authz.Grant, error) {
	if err := Validate(in); err != nil {
		return authz.Grant{}, err
	}
	if in.ResourceKind == kernel.ResourceInstance {
		info, err := g.instance.Info(ctx)
		if err != nil {
			return authz.Grant{}, fmt.Errorf("authz: create grant: %w", err)
		}
		if in.ResourceID != uuid.Nil && in.ResourceID != info.ID {
			return authz.Grant{}, problem.Validation(problem.FieldError{Field: "resource_id", Message: "must be omitted or the instance's id for an instance grant"})
		}
		in.ResourceID = info.ID
	}
	target, err := g.target(ctx, in.ResourceKind, in.ResourceID)
	if err != nil {
		return authz.Grant{}, err
	}
	if err := g.authorizeTarget(ctx, target, in.Role); err != nil {
		return authz.Grant{}, err
	}
	if _, err := g.principals.Ref(ctx, in.PrincipalID); err != nil {
		if errors.Is(err, problem.ErrNotFound) {
			return authz.Grant{}, problem.Validation(problem.FieldError{Field: "principal_id", Message: "does not name a principal"})
		}
		return authz.Grant{}, fmt.Errorf("authz: create grant: %w", err)
	}
	return g.Grant(ctx, in)
}

// RevokeGrant revokes a grant for the actor in ctx, who must hold grant.admin on its target;
// an owner grant takes an owner. problem.ErrNotFound for a grant that does not exist or whose
// target the actor cannot see; ErrLastOwner for the last owner grant.
func (g *Grants) RevokeGrant(ctx context.Context, grantID uuid.UUID) error {
	gr, err := g.store.Get(ctx, grantID)
	if err != nil {
		return fmt.Errorf("authz: revoke grant: %w", err)
	}
	target, err := g.target(ctx, gr.ResourceKind, gr.ResourceID)
	if errors.Is(err, problem.ErrNotFound) {
		// The space or channel is gone; only instance administrators may clean up after it.
		target = authorize.Instance()
	} else if err != nil {
		return err
	}
	if err := g.authorizeTarget(ctx, target, gr.Role); err != nil {
		return err
	}
	_, err = g.Revoke(ctx, grantID)
	return err
}

// GrantPage is one page of ListGrants.
type GrantPage struct {
	// Items are the grants the actor may manage, in id order.
	Items []authz.Grant
	// NextCursor is the id of the last grant checked when the page was full (pass it as
	// after for the next page); uuid.Nil at the end.
	NextCursor uuid.UUID
}

// ListGrants lists, for the actor in ctx, the grants it manages (grant.admin on each grant's
// target, decided in filter mode, so hidden grants are not audited), of one principal or of
// everyone (uuid.Nil), after the cursor, at most limit checked per page (0 or above the page
// size: the page size).
func (g *Grants) ListGrants(ctx context.Context, principalID, after uuid.UUID, limit int) (GrantPage, error) {
	if limit <= 0 || limit > g.pageSize {
		limit = g.pageSize
	}
	dec, err := g.authorizer.ForActor(ctx)
	if err != nil {
		return GrantPage{}, err
	}
	page, err := g.store.Page(ctx, principalID, after, limit)
	if err != nil {
		return GrantPage{}, fmt.Errorf("authz: list grants: %w", err)
	}
	var channels []uuid.UUID
	for _, gr := range page {
		if gr.ResourceKind == kernel.ResourceChannel {
			channels = append(channels, gr.ResourceID)
		}
	}
	var spaces map[uuid.UUID]uuid.UUID
	if len(channels) > 0 {
		if spaces, err = g.directory.SpacesOfChannels(ctx, channels); err != nil {
			return GrantPage{}, fmt.Errorf("authz: list grants: %w", err)
		}
	}
	filter := authorize.Filter(ctx)
	out := GrantPage{Items: []authz.Grant{}}
	for _, gr := range page {
		res := authorize.Resource{Kind: gr.ResourceKind, ID: gr.ResourceID}
		switch gr.ResourceKind {
		case kernel.ResourceInstance:
			res = authorize.Instance()
		case kernel.ResourceSpace:
			res.SpaceID = gr.ResourceID
		case kernel.ResourceChannel:
			res.ChannelID, res.SpaceID = gr.ResourceID, spaces[gr.ResourceID]
		}
		err := dec.Authorize(filter, kernel.ActionGrantAdmin, res)
		switch {
		case err == nil:
			out.Items = append(out.Items, gr)
		case isDenial(err):
		default:
			return GrantPage{}, err
		}
	}
	if len(page) == limit {
		out.NextCursor = page[len(page)-1].ID
	}
	return out, nil
}

// isDenial reports whether err is an authorization denial rather than a failure.
func isDenial(err error) bool {
	return errors.Is(err, problem.ErrNotFound) || errors.Is(err, problem.ErrForbidden) ||
		errors.Is(err, problem.ErrDevicePending) || errors.Is(err, problem.ErrUnauthenticated)
}

// target is the resource a grant on (kind, id) is about, with its space for a channel.
// problem.ErrNotFound when the space or channel does not exist.
func (g *Grants) target(ctx context.Context, kind kernel.ResourceKind, id uuid.UUID) (authorize.Resource, error) {
	switch kind {
	case kernel.ResourceSpace:
		ok, err := g.directory.SpaceExists(ctx, id)
		if err != nil {
			return authorize.Resource{}, fmt.Errorf("authz: space exists: %w", err)
		}
		if !ok {
			return authorize.Resource{}, problem.ErrNotFound
		}
		return authorize.Resource{Kind: kernel.ResourceSpace, ID: id, SpaceID: id}, nil
	case kernel.ResourceChannel:
		ok, err := g.directory.ChannelExists(ctx, id)
		if err != nil {
			return authorize.Resource{}, fmt.Errorf("authz: channel exists: %w", err)
		}
		if !ok {
			return authorize.Resource{}, problem.ErrNotFound
		}
		spaces, err := g.directory.SpacesOfChannels(ctx, []uuid.UUID{id})
		if err != nil {
			return authorize.Resource{}, fmt.Errorf("authz: space of channel: %w", err)
		}
		return authorize.Resource{Kind: kernel.ResourceChannel, ID: id, ChannelID: id, SpaceID: spaces[id]}, nil
	}
	return authorize.Instance(), nil
}

// authorizeTarget checks grant.admin on the target and, for the owner role, that the actor is
// an owner.
func (g *Grants) authorizeTarget(ctx context.Context, target authorize.Resource, role authz.Role) error {
	if err := g.authorizer.Authorize(ctx, kernel.ActionGrantAdmin, target); err != nil {
		return err
	}
	if role != authz.RoleOwner {
		return nil
	}
	who, _ := actor.From(ctx) // Authorize refused a context without an actor
	s, err := g.authorizer.Scope(ctx, who.PrincipalID)
	if err != nil {
		return err
	}
	if !s.IsOwner() || who.DevicePending {
		return ErrOwnerOnly
	}
	return nil
}
