package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/authz/domain"
	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/tx"
)

// DenialsMetric is the name of the counter of audited denials, by action and reason (the
// outcome: unauthenticated, device_pending, not_found or forbidden).
const DenialsMetric = "bothy_authz_denials_total"

// AuthorizerDeps are the collaborators of an Authorizer, all required.
type AuthorizerDeps struct {
	// Grants reads the grants a Scope is built from.
	Grants GrantStore
	// Versions reads the permission_version a cached Scope must match.
	Versions instance.Versions
	// Directory gives the spaces of granted channels (visible spaces) and of channels a
	// caller named without their space.
	Directory ChannelDirectory
	// CacheSize is authz.scope_cache_size, at least 1.
	CacheSize int
	// Logger receives one line per audited denial.
	Logger *slog.Logger
	// Registerer is where the denial counter is registered (the process's registry).
	Registerer prometheus.Registerer
	// Floor, when set, is the newest permission_version this process committed (Grants
	// raises it): a version the caller knew (authz.WithPermissionVersion) older than the floor
	// gives way to it.
	Floor *VersionFloor
}

// Authorizer implements authz.Authorizer: Scope with its per-process cache, Authorize, and
// ForActor. It is safe for concurrent use.
type Authorizer struct {
	grants    GrantStore
	versions  instance.Versions
	directory ChannelDirectory
	cache     *scopeCache
	floor     *VersionFloor
	logger    *slog.Logger
	denials   *prometheus.CounterVec
}

var _ authz.Authorizer = (*Authorizer)(nil)

// NewAuthorizer returns an Authorizer over deps and registers its denial counter. It fails
// for a missing dependency, a cache size below 1, or a registry that refuses the counter.
func NewAuthorizer(deps AuthorizerDeps) (*Authorizer, error) {
	var errs []error
	if deps.Grants == nil {
		errs = append(errs, errors.New("grant store is nil"))
	}
	if deps.Versions == nil {
		errs = append(errs, errors.New("versions port is nil"))
	}
	if deps.Directory == nil {
		errs = append(errs, errors.New("channel directory is nil"))
	}
	if deps.CacheSize < 1 {
		errs = append(errs, fmt.Errorf("scope cache size %d: must be at least 1", deps.CacheSize))
	}
	if deps.Logger == nil {
		errs = append(errs, errors.New("logger is nil"))
	}
	if deps.Registerer == nil {
		errs = append(errs, errors.New("metrics registerer is nil"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("authz: new authorizer: %w", err)
	}
	denials := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: DenialsMetric,
		Help: "Authorization denials outside filter mode, by action and reason (unauthenticated, device_pending, not_found, forbidden).",
	}, []string{"action", "reason"})
	if err := deps.Registerer.Register(denials); err != nil {
		return nil, fmt.Errorf("authz: register %s: %w", DenialsMetric, err)
	}
	return &Authorizer{
		grants:    deps.Grants,
		versions:  deps.Versions,
		directory: deps.Directory,
		cache:     newScopeCache(deps.CacheSize),
		floor:     deps.Floor,
		logger:    deps.Logger,
		denials:   denials,
	}, nil
}

// Scope implements authz.Authorizer. A Scope pinned in ctx for the principal (authz.WithScope)
// is returned as it is outside a transaction. Otherwise it reads the permission_version first
// and the grants after, so a grant committed in between is at worst in a Scope tagged with the
// older version (which the next call replaces), never missing from one tagged with the newer.
// A Scope built inside a transaction is not cached: it may hold that transaction's
// uncommitted grants. Outside one, a permission_version the caller read a moment ago
// (authz.WithPermissionVersion) stands for the read, or the process's VersionFloor when that
// is newer (a change the same request committed since).
func (a *Authorizer) Scope(ctx context.Context, principalID uuid.UUID) (authz.Scope, error) {
	inTx := inTransaction(ctx)
	if s, ok := authz.PinnedScope(ctx, principalID); ok && !inTx {
		return s, nil
	}
	version, known := authz.KnownPermissionVersion(ctx)
	if !known || inTx {
		var err error
		if version, err = a.versions.PermissionVersion(ctx); err != nil {
			return authz.Scope{}, fmt.Errorf("authz: scope: %w", err)
		}
	} else {
		version = max(version, a.floor.Load())
	}
	if s, ok := a.cache.get(principalID); ok && s.PermissionVersion() == version {
		return s, nil
	}
	grants, err := a.grants.OfPrincipal(ctx, principalID)
	if err != nil {
		return authz.Scope{}, fmt.Errorf("authz: scope: %w", err)
	}
	var channels []uuid.UUID
	for _, g := range grants {
		if g.ResourceKind == kernel.ResourceChannel {
			channels = append(channels, g.ResourceID)
		}
	}
	var spaces map[uuid.UUID]uuid.UUID
	if len(channels) > 0 {
		if spaces, err = a.directory.SpacesOfChannels(ctx, channels); err != nil {
			return authz.Scope{}, fmt.Errorf("authz: scope: spaces of channels: %w", err)
		}
	}
	s := authz.NewScope(principalID, version, grants, spaces)
	if !inTx {
		a.cache.put(s)
	}
	return s, nil
}

// txProbe keys the value inTransaction stores in a transaction.
type txProbe struct{}

// inTransaction reports whether ctx carries an open transaction (tx.Value fails outside one).
func inTransaction(ctx context.Context) bool {
	_, err := tx.Value(ctx, txProbe{}, func() any { return struct{}{} })
	return err == nil
}

// Authorize implements authorize.Authorizer for the actor in ctx: its Scope (cached while
// current), the resource's space filled in when the caller did not know it, domain.Decide, and
// the audit of a denial unless authorize.IsFilter(ctx).
func (a *Authorizer) Authorize(ctx context.Context, action kernel.Action, res authorize.Resource) error {
	who, ok := actor.From(ctx)
	if !ok {
		a.audit(ctx, actor.Actor{}, action, res, domain.Decision{Outcome: domain.OutcomeUnauthenticated, Cause: domain.CauseNoActor})
		return domain.Decision{Outcome: domain.OutcomeUnauthenticated}.Err()
	}
	if who.DevicePending {
		// Refused whatever the grants: no need to read them.
		d := domain.Decide(who, authz.Scope{}, action, res)
		a.audit(ctx, who, action, res, d)
		return d.Err()
	}
	s, err := a.Scope(ctx, who.PrincipalID)
	if err != nil {
		return err
	}
	return a.decide(ctx, who, s, action, res)
}

// ForActor implements authz.Authorizer.
func (a *Authorizer) ForActor(ctx context.Context) (authz.Decider, error) {
	who, ok := actor.From(ctx)
	if !ok {
		return nil, domain.Decision{Outcome: domain.OutcomeUnauthenticated}.Err()
	}
	s, err := a.Scope(ctx, who.PrincipalID)
	if err != nil {
		return nil, err
	}
	return &decider{a: a, who: who, scope: s}, nil
}

// MayRead implements authz.Authorizer: the principal's Scope (cached while current), the
// resource's space filled in when it could matter, and domain.Visible for the principal as a
// person without scopes, so neither app scopes nor a pending device of some token count.
func (a *Authorizer) MayRead(ctx context.Context, principalID uuid.UUID, res authorize.Resource) (bool, error) {
	s, err := a.Scope(ctx, principalID)
	if err != nil {
		return false, err
	}
	res, err = a.resolve(ctx, s, res)
	if err != nil {
		return false, err
	}
	return domain.Visible(actor.Actor{PrincipalID: principalID, Kind: actor.KindPerson}, s, res), nil
}

// decide resolves the resource's space, decides and audits.
func (a *Authorizer) decide(ctx context.Context, who actor.Actor, s authz.Scope, action kernel.Action, res authorize.Resource) error {
	res, err := a.resolve(ctx, s, res)
	if err != nil {
		return err
	}
	d := domain.Decide(who, s, action, res)
	if d.Allowed() {
		if d, err = a.guardOwner(ctx, s, action, res); err != nil {
			return err
		}
	}
	if !d.Allowed() {
		a.audit(ctx, who, action, res, d)
	}
	return d.Err()
}

// guardOwner refuses principal.admin on a principal who holds the owner grant unless the
// actor is an owner too: an instance admin may issue tokens and approve devices for other
// principals, and doing so for an owner would let the admin act as that owner. The target's
// Scope comes from the same cache as every actor's, so the guard costs a query only on a miss.
func (a *Authorizer) guardOwner(ctx context.Context, s authz.Scope, action kernel.Action, res authorize.Resource) (domain.Decision, error) {
	allowed := domain.Decision{Outcome: domain.OutcomeAllowed}
	if action != kernel.ActionPrincipalAdmin || res.Kind != kernel.ResourcePrincipal || res.ID == uuid.Nil || s.IsOwner() {
		return allowed, nil
	}
	target, err := a.Scope(ctx, res.ID)
	if err != nil {
		return domain.Decision{}, fmt.Errorf("authz: scope of target principal: %w", err)
	}
	if target.IsOwner() {
		return domain.Decision{Outcome: domain.OutcomeForbidden, Cause: domain.CauseOwnerTarget}, nil
	}
	return allowed, nil
}

// resolve fills the space of a channel, thread or message the caller named without it, or
// marks it Direct (a direct message, which no instance role reaches), when that could change
// the decision: a space grant or an instance role makes it matter, and the space of a granted
// channel is in the Scope already (a granted channel of no space is a direct message).
// Otherwise one query to the channel directory. Events name their space, and a DM event is
// Direct already (authorize.ResourceFromEvent), so catch-up and live delivery ask nothing.
func (a *Authorizer) resolve(ctx context.Context, s authz.Scope, res authorize.Resource) (authorize.Resource, error) {
	var channel uuid.UUID
	switch res.Kind {
	case kernel.ResourceChannel:
		channel = res.ID
	case kernel.ResourceThread, kernel.ResourceMessage:
		channel = res.ChannelID
	default:
		return res, nil
	}
	if res.SpaceID != uuid.Nil || channel == uuid.Nil || res.Direct {
		return res, nil
	}
	if sp, ok := s.SpaceOfGrantedChannel(channel); ok {
		res.SpaceID = sp
		return res, nil
	}
	// A channel the principal holds a grant on and whose space the Scope does not know lies in
	// no space (a direct message): asking the directory again for every one of its events
	// (catch-up pages, live delivery) would learn nothing.
	if s.ChannelGrantRole(channel) != "" {
		res.Direct = true
		return res, nil
	}
	// Without a channel grant only a space grant or an instance role could reach it; with
	// neither it is invisible whatever its space.
	if !s.HasSpaceGrants() && s.InstanceRole() == "" {
		return res, nil
	}
	spaces, err := a.directory.SpacesOfChannels(ctx, []uuid.UUID{channel})
	if err != nil {
		return res, fmt.Errorf("authz: space of channel: %w", err)
	}
	if sp, ok := spaces[channel]; ok {
		res.SpaceID = sp
		return res, nil
	}
	// No space: a direct message, which no instance role reaches, or a channel the directory
	// does not know (yet), decided as before.
	direct, _, err := a.directory.DirectParticipant(ctx, channel, uuid.Nil)
	if err != nil {
		return res, fmt.Errorf("authz: direct message: %w", err)
	}
	res.Direct = direct
	return res, nil
}

// audit records a denial outside filter mode: one log line with ids only (never a token or a
// body) and the counter.
func (a *Authorizer) audit(ctx context.Context, who actor.Actor, action kernel.Action, res authorize.Resource, d domain.Decision) {
	if authorize.IsFilter(ctx) {
		return
	}
	a.denials.WithLabelValues(string(action), string(d.Outcome)).Inc()
	attrs := []slog.Attr{
		slog.String("action", string(action)),
		slog.String("resource_kind", string(res.Kind)),
	}
	if res.ID != uuid.Nil {
		attrs = append(attrs, slog.String("resource_id", res.ID.String()))
	}
	if who.PrincipalID != uuid.Nil {
		attrs = append(attrs, slog.String("actor_id", who.PrincipalID.String()), slog.String("actor_kind", string(who.Kind)))
	}
	attrs = append(attrs, slog.String("decision", string(d.Outcome)), slog.String("cause", d.Cause))
	a.logger.LogAttrs(ctx, slog.LevelInfo, "authorization denied", attrs...)
}

// decider is an authz.Decider: one actor, one Scope.
type decider struct {
	a     *Authorizer
	who   actor.Actor
	scope authz.Scope
}

// Scope implements authz.Decider.
func (d *decider) Scope() authz.Scope { return d.scope }

// Authorize implements authz.Decider.
func (d *decider) Authorize(ctx context.Context, action kernel.Action, res authorize.Resource) error {
	return d.a.decide(ctx, d.who, d.scope, action, res)
}

// Level implements authz.Decider with domain.RoleOn.
func (d *decider) Level(res authorize.Resource) authz.Role {
	return domain.RoleOn(d.scope, res)
}
