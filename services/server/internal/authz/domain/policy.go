// Package domain is the authorization policy of bothy (spec 04) as pure functions: for every
// action and resource kind the rule that allows it, the inheritance of roles along a
// resource's ancestors, the mapping of app scopes to actions, and Decide, which turns an
// actor, its Scope and a resource into allowed, device_pending, not_found or forbidden. No
// I/O: the app package loads the Scope and calls Decide.
package domain

import (
	"slices"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

// Need is what a rule asks of the actor beyond being able to read the resource.
type Need string

// The needs a rule can have.
const (
	// NeedRead asks only that the actor can read the resource. The instance, principals,
	// agents and the grant collection are readable by every principal of the instance; a
	// space, channel, thread or message by whoever holds a role on it (see Visible).
	NeedRead Need = "read"
	// NeedRole asks for at least Rule.Min on the resource, inherited along its ancestors
	// (see RoleOn).
	NeedRole Need = "role"
	// NeedSelf asks that the resource is the actor itself (its own personal data).
	NeedSelf Need = "self"
	// NeedGrantManager asks that the actor manages some grants: admin or owner on the
	// instance, or admin of some space or channel.
	NeedGrantManager Need = "grant_manager"
)

// Rule allows one action on one resource kind.
type Rule struct {
	// Action is the action.
	Action kernel.Action
	// Kind is the resource kind the action is asked on.
	Kind kernel.ResourceKind
	// Need is what the actor needs.
	Need Need
	// Min is the least role for NeedRole; empty otherwise.
	Min authz.Role
	// Note says which operation uses the pair and why the rule is what it is, for the
	// policy table of the documentation.
	Note string
}

func read(a kernel.Action, k kernel.ResourceKind, note string) Rule {
	return Rule{Action: a, Kind: k, Need: NeedRead, Note: note}
}

func role(a kernel.Action, k kernel.ResourceKind, floor authz.Role, note string) Rule {
	return Rule{Action: a, Kind: k, Need: NeedRole, Min: floor, Note: note}
}

// policy is the one table: an (action, kind) pair not listed here is denied for everyone,
// the owner included. The owner passes every rule listed (spec 04: owner is everything).
var policy = []Rule{
	read(kernel.ActionInstanceRead, kernel.ResourceInstance, "getInstance, flags.updated: every principal belongs to the instance"),
	role(kernel.ActionInstanceAdmin, kernel.ResourceInstance, authz.RoleAdmin, "administers the instance"),
	read(kernel.ActionPrincipalRead, kernel.ResourcePrincipal, "getMe and names of principals: every envelope names its actor anyway"),
	role(kernel.ActionPrincipalAdmin, kernel.ResourcePrincipal, authz.RoleAdmin, "createPerson, createApp, createToken, approveDevice: instance admins"),
	role(kernel.ActionPrincipalDeactivate, kernel.ResourcePrincipal, authz.RoleOwner, "deactivatePrincipal, reactivatePrincipal: owners only, since it ends every session of the principal"),
	{Action: kernel.ActionTokenAdmin, Kind: kernel.ResourcePrincipal, Need: NeedSelf, Note: "listTokens, revokeToken: one's own tokens, an owner anyone's"},
	role(kernel.ActionSpaceCreate, kernel.ResourceInstance, authz.RoleAdmin, "createSpace: shaping the instance is managing it"),
	read(kernel.ActionSpaceRead, kernel.ResourceInstance, "listSpaces: every principal lists, each item is filtered by space.read on the space"),
	read(kernel.ActionSpaceRead, kernel.ResourceSpace, "listSpaceChannels, space events: a grant on the space or on one of its channels"),
	role(kernel.ActionSpaceUpdate, kernel.ResourceSpace, authz.RoleAdmin, "manages the space"),
	role(kernel.ActionSpaceArchive, kernel.ResourceSpace, authz.RoleAdmin, "manages the space"),
	read(kernel.ActionChannelCreate, kernel.ResourceInstance, "createDirectMessage: every principal may open a direct message"),
	role(kernel.ActionChannelCreate, kernel.ResourceSpace, authz.RoleAdmin, "createChannel: a channel in a space is managing the space"),
	read(kernel.ActionChannelRead, kernel.ResourceChannel, "channel events and views"),
	role(kernel.ActionChannelUpdate, kernel.ResourceChannel, authz.RoleAdmin, "manages the channel"),
	role(kernel.ActionChannelArchive, kernel.ResourceChannel, authz.RoleAdmin, "manages the channel"),
	role(kernel.ActionThreadCreate, kernel.ResourceChannel, authz.RoleMember, "createThread: posting"),
	read(kernel.ActionThreadRead, kernel.ResourceChannel, "the threads of a channel"),
	read(kernel.ActionThreadRead, kernel.ResourceThread, "listMessages, thread and message events"),
	read(kernel.ActionThreadRead, kernel.ResourceMessage, "message events: a message is read with its thread"),
	read(kernel.ActionThreadRead, kernel.ResourceInstance, "searchMessages: every principal searches, each hit is filtered by thread.read on its message"),
	role(kernel.ActionMessageCreate, kernel.ResourceThread, authz.RoleMember, "postMessage"),
	role(kernel.ActionMessageUpdate, kernel.ResourceMessage, authz.RoleMember, "editMessage of one's own message; chat checks the author"),
	role(kernel.ActionMessageUpdate, kernel.ResourceChannel, authz.RoleAdmin, "editMessage of someone else's message: admins moderate any message of the channel"),
	role(kernel.ActionMessageDelete, kernel.ResourceMessage, authz.RoleMember, "deleteMessage of one's own message; chat checks the author"),
	role(kernel.ActionMessageDelete, kernel.ResourceChannel, authz.RoleAdmin, "deleteMessage of someone else's message: admins moderate"),
	role(kernel.ActionReactionWrite, kernel.ResourceMessage, authz.RoleMember, "addReaction, removeReaction: reacting is posting, so a viewer reads but does not react"),
	role(kernel.ActionReadStateWrite, kernel.ResourceThread, authz.RoleMember, "updateReadState: members keep personal data"),
	role(kernel.ActionDraftWrite, kernel.ResourceChannel, authz.RoleMember, "saveDraft, deleteDraft: members keep personal data"),
	read(kernel.ActionDraftRead, kernel.ResourceChannel, "getDraft: one's own draft is read wherever its channel is (a draft kept as a member outlives a demotion to viewer)"),
	{Action: kernel.ActionSettingWrite, Kind: kernel.ResourcePrincipal, Need: NeedSelf, Note: "putSetting, putSidebar: one's own settings only"},
	{Action: kernel.ActionGrantAdmin, Kind: kernel.ResourceGrant, Need: NeedGrantManager, Note: "createGrant, revokeGrant, listGrants: the use case then checks grant.admin on the grant's target"},
	role(kernel.ActionGrantAdmin, kernel.ResourceInstance, authz.RoleAdmin, "grants on the instance (owner grants: owners only, checked by the use case)"),
	role(kernel.ActionGrantAdmin, kernel.ResourceSpace, authz.RoleAdmin, "grants on the space"),
	role(kernel.ActionGrantAdmin, kernel.ResourceChannel, authz.RoleAdmin, "grants on the channel"),
	role(kernel.ActionAgentCreate, kernel.ResourceInstance, authz.RoleMember, "createAgent: members of the instance"),
	read(kernel.ActionAgentRead, kernel.ResourceInstance, "listAgents: every principal lists, each item is filtered by agent.read"),
	read(kernel.ActionAgentRead, kernel.ResourceAgent, "agent events and views"),
	read(kernel.ActionEventsCatchUp, kernel.ResourceInstance, "listEvents: each event is filtered by its receive action"),
	read(kernel.ActionSyncSnapshotRead, kernel.ResourceInstance, "getSnapshot: each part is filtered"),
}

type ruleKey struct {
	action kernel.Action
	kind   kernel.ResourceKind
}

var rules = func() map[ruleKey]Rule {
	m := make(map[ruleKey]Rule, len(policy))
	for _, r := range policy {
		m[ruleKey{r.Action, r.Kind}] = r
	}
	return m
}()

// Policy returns every rule in table order (a copy), for the documentation and tests.
func Policy() []Rule {
	return slices.Clone(policy)
}

// RuleFor returns the rule of the pair; ok is false when no rule allows the action on the
// kind, which denies it for everyone.
func RuleFor(action kernel.Action, kind kernel.ResourceKind) (Rule, bool) {
	r, ok := rules[ruleKey{action, kind}]
	return r, ok
}

// scopeActions is spec 04's mapping of app scopes to the actions they cover.
var scopeActions = map[string][]kernel.Action{
	identity.ScopeEventsSubscribe: {kernel.ActionEventsCatchUp, kernel.ActionSyncSnapshotRead},
	identity.ScopeMessagesRead:    {kernel.ActionSpaceRead, kernel.ActionChannelRead, kernel.ActionThreadRead},
	identity.ScopeMessagesWrite:   {kernel.ActionThreadCreate, kernel.ActionMessageCreate, kernel.ActionMessageUpdate, kernel.ActionMessageDelete, kernel.ActionReactionWrite},
	identity.ScopeAgentsRead:      {kernel.ActionAgentRead},
}

// ScopeActions returns the actions a scope covers (a copy); none for an unknown scope.
func ScopeActions(scope string) []kernel.Action {
	return slices.Clone(scopeActions[scope])
}

// Scoped reports whether a's token is limited by scopes: an app always (an app without scopes
// may do nothing), a person or agent when its token carries scopes.
func Scoped(a actor.Actor) bool {
	return a.Kind == actor.KindApp || len(a.Scopes) > 0
}

// covers reports whether one of the scopes covers the action.
func covers(scopes []string, action kernel.Action) bool {
	for _, s := range scopes {
		if slices.Contains(scopeActions[s], action) {
			return true
		}
	}
	return false
}

// RoleOn is the actor's role on the resource: the highest of its grant on the instance, on
// the resource's space and on its channel, as far as the resource has them. A space consults
// the instance and itself; a channel the instance, its space (SpaceID; none for a direct
// message) and itself; a thread and a message the instance, their space and their channel
// (ChannelID). The instance, principals, agents and grants get the instance role.
func RoleOn(s authz.Scope, res authorize.Resource) authz.Role {
	if res.Direct {
		// A direct message is private to its participants: only the grant on its channel
		// counts, no instance role (the owner's included).
		switch res.Kind {
		case kernel.ResourceChannel:
			return s.ChannelGrantRole(res.ID)
		case kernel.ResourceThread, kernel.ResourceMessage:
			return s.ChannelGrantRole(res.ChannelID)
		}
	}
	r := s.InstanceRole()
	switch res.Kind {
	case kernel.ResourceSpace:
		r = higher(r, s.SpaceGrantRole(res.ID))
	case kernel.ResourceChannel:
		r = higher(r, s.SpaceGrantRole(res.SpaceID))
		r = higher(r, s.ChannelGrantRole(res.ID))
	case kernel.ResourceThread, kernel.ResourceMessage:
		r = higher(r, s.SpaceGrantRole(res.SpaceID))
		r = higher(r, s.ChannelGrantRole(res.ChannelID))
	}
	return r
}

func higher(a, b authz.Role) authz.Role {
	if b.Rank() > a.Rank() {
		return b
	}
	return a
}

// readAction is the action that reads a resource of the kind, which an app's scopes must cover
// for the resource to be visible to it; empty for the kinds every principal reads.
func readAction(kind kernel.ResourceKind) kernel.Action {
	switch kind {
	case kernel.ResourceSpace:
		return kernel.ActionSpaceRead
	case kernel.ResourceChannel:
		return kernel.ActionChannelRead
	case kernel.ResourceThread, kernel.ResourceMessage:
		return kernel.ActionThreadRead
	}
	return ""
}

// Visible reports whether the actor can read the resource, which decides 404 against 403. The
// instance, principals, agents and the grant collection are visible to every principal. A
// space is visible with a role on it (RoleOn) or a grant on one of its channels; a channel,
// thread or message with a role on it. For a scoped actor (an app) a scope must also cover
// reading the kind: without it the resource is invisible, exactly as without the grant.
func Visible(a actor.Actor, s authz.Scope, res authorize.Resource) bool {
	switch res.Kind {
	case kernel.ResourceInstance, kernel.ResourcePrincipal, kernel.ResourceAgent, kernel.ResourceGrant:
		return true
	case kernel.ResourceSpace:
		if !RoleOn(s, res).AtLeast(authz.RoleViewer) && !s.SpaceVisible(res.ID) {
			return false
		}
	case kernel.ResourceChannel, kernel.ResourceThread, kernel.ResourceMessage:
		if !RoleOn(s, res).AtLeast(authz.RoleViewer) {
			return false
		}
	default:
		return false
	}
	return !Scoped(a) || covers(a.Scopes, readAction(res.Kind))
}

// Outcome is the result of a decision; the denials are named like their problem codes.
type Outcome string

// The outcomes of Decide (and of the authorizer, which adds OutcomeUnauthenticated).
const (
	// OutcomeAllowed lets the action proceed.
	OutcomeAllowed Outcome = "allowed"
	// OutcomeUnauthenticated: there is no actor.
	OutcomeUnauthenticated Outcome = "unauthenticated"
	// OutcomeDevicePending: the actor's device awaits approval.
	OutcomeDevicePending Outcome = "device_pending"
	// OutcomeNotFound: the actor cannot read the resource; answered like a missing one.
	OutcomeNotFound Outcome = "not_found"
	// OutcomeForbidden: the actor can read the resource but not do this.
	OutcomeForbidden Outcome = "forbidden"
)

// The causes of decisions, for the audit log line (never for the response body).
const (
	causeRule          = "rule"
	causeOwner         = "owner"
	causeDevicePending = "device pending"
	causeInvisible     = "cannot read the resource"
	causeScopeRead     = "no app scope covers reading the resource"
	causeScope         = "no app scope covers the action"
	causeNoRule        = "no rule allows the action on this kind"
	causeRole          = "role too low"
	causeNotSelf       = "not the actor's own"
	causeNotManager    = "manages no grants"
	// CauseNoActor is the cause of OutcomeUnauthenticated.
	CauseNoActor = "no actor"
	// CauseOwnerTarget is the cause of refusing principal.admin on a principal who holds the
	// owner grant to an actor who does not: managing an owner's tokens or devices would let an
	// admin act as the owner.
	CauseOwnerTarget = "target is an owner"
)

// Decision is an outcome with its cause.
type Decision struct {
	// Outcome is allowed or the kind of denial.
	Outcome Outcome
	// Cause says which rule decided, for the audit log; it holds no ids.
	Cause string
}

// Allowed reports whether the decision allows the action.
func (d Decision) Allowed() bool { return d.Outcome == OutcomeAllowed }

// Err returns nil for an allowed decision, else the problem kind of the denial, bare: the
// response must be exactly that of the kind (for not_found, that of a missing resource).
func (d Decision) Err() error {
	switch d.Outcome {
	case OutcomeAllowed:
		return nil
	case OutcomeUnauthenticated:
		return problem.ErrUnauthenticated
	case OutcomeDevicePending:
		return problem.ErrDevicePending
	case OutcomeNotFound:
		return problem.ErrNotFound
	}
	return problem.ErrForbidden
}

// Decide is the decision of spec 04 for actor a with Scope s (a's, at the current permission
// version) on res, whose ancestors the caller filled. In order: a pending device is refused
// every action; a resource a cannot read (Visible) is not_found; an (action, kind) pair
// without a rule, an action no scope of a scoped actor covers, or a rule a does not meet is
// forbidden; the owner meets every rule.
func Decide(a actor.Actor, s authz.Scope, action kernel.Action, res authorize.Resource) Decision {
	if a.DevicePending {
		return Decision{OutcomeDevicePending, causeDevicePending}
	}
	if !Visible(a, s, res) {
		if Scoped(a) && Visible(actor.Actor{PrincipalID: a.PrincipalID, Kind: actor.KindPerson}, s, res) {
			return Decision{OutcomeNotFound, causeScopeRead}
		}
		return Decision{OutcomeNotFound, causeInvisible}
	}
	rule, ok := RuleFor(action, res.Kind)
	if !ok {
		return Decision{OutcomeForbidden, causeNoRule}
	}
	if Scoped(a) && !covers(a.Scopes, action) {
		return Decision{OutcomeForbidden, causeScope}
	}
	if s.IsOwner() {
		return Decision{OutcomeAllowed, causeOwner}
	}
	switch rule.Need {
	case NeedRead:
		return Decision{OutcomeAllowed, causeRule}
	case NeedRole:
		if RoleOn(s, res).AtLeast(rule.Min) {
			return Decision{OutcomeAllowed, causeRule}
		}
		return Decision{OutcomeForbidden, causeRole}
	case NeedSelf:
		if res.ID == a.PrincipalID {
			return Decision{OutcomeAllowed, causeRule}
		}
		return Decision{OutcomeForbidden, causeNotSelf}
	case NeedGrantManager:
		if s.ManagesGrants() {
			return Decision{OutcomeAllowed, causeRule}
		}
		return Decision{OutcomeForbidden, causeNotManager}
	}
	return Decision{OutcomeForbidden, causeNoRule}
}
