package kernel

// ResourceKind names what an action is authorized against and what a durable event changed
// (spec 04 resources, plus grant for the grant events). It lives in the kernel because the
// operation register, the authorizer, the event log and the envelope must all spell it alike.
type ResourceKind string

// The resource kinds of spec 04. A thread inherits its channel's permissions and a message its
// thread's; a grant is authorized on the resource it is about.
const (
	// ResourceInstance is the instance as a whole (instance-wide grants, flags).
	ResourceInstance ResourceKind = "instance"
	// ResourceSpace is a space, which groups channels.
	ResourceSpace ResourceKind = "space"
	// ResourceChannel is a standard or direct-message channel.
	ResourceChannel ResourceKind = "channel"
	// ResourceThread is a thread of a channel.
	ResourceThread ResourceKind = "thread"
	// ResourceMessage is a message of a thread.
	ResourceMessage ResourceKind = "message"
	// ResourceAgent is an agent profile.
	ResourceAgent ResourceKind = "agent"
	// ResourcePrincipal is a person, agent or app, also the owner of personal data.
	ResourcePrincipal ResourceKind = "principal"
	// ResourceGrant is a role grant of a principal on the instance, a space or a channel.
	ResourceGrant ResourceKind = "grant"
)

// resourceKinds lists every ResourceKind in the order of api/operations.yaml.
var resourceKinds = []ResourceKind{
	ResourceInstance, ResourceSpace, ResourceChannel, ResourceThread, ResourceMessage,
	ResourceAgent, ResourcePrincipal, ResourceGrant,
}

// ResourceKinds returns every resource kind, in the order of api/operations.yaml, so that
// registers and tests can range over them. The slice is a copy.
func ResourceKinds() []ResourceKind {
	return append([]ResourceKind(nil), resourceKinds...)
}

// Valid reports whether k is one of the resource kinds, so that values read from outside (the
// database, a request) can be checked before they are trusted.
func (k ResourceKind) Valid() bool {
	for _, v := range resourceKinds {
		if v == k {
			return true
		}
	}
	return false
}

// Action is one action of spec 04: every operation names exactly one, and every durable event
// that is not personal names the one a receiver needs to see it (its receive action).
type Action string

// The actions of spec 04, spelled as in api/operations.yaml.
const (
	// ActionInstanceRead reads the instance: its info, flags and instance-wide events.
	ActionInstanceRead Action = "instance.read"
	// ActionInstanceAdmin administers the instance.
	ActionInstanceAdmin Action = "instance.admin"
	// ActionPrincipalRead reads principals (people, agents, apps).
	ActionPrincipalRead Action = "principal.read"
	// ActionPrincipalAdmin creates, changes and deactivates principals.
	ActionPrincipalAdmin Action = "principal.admin"
	// ActionPrincipalDeactivate deactivates and reactivates principals: owners only, since a
	// deactivation ends every session of the principal at once.
	ActionPrincipalDeactivate Action = "principal.deactivate"
	// ActionTokenAdmin lists and revokes the tokens of a principal: one's own, and an owner
	// anyone's.
	ActionTokenAdmin Action = "token.admin"
	// ActionSpaceCreate creates a space.
	ActionSpaceCreate Action = "space.create"
	// ActionSpaceRead reads a space and receives its events.
	ActionSpaceRead Action = "space.read"
	// ActionSpaceUpdate changes a space.
	ActionSpaceUpdate Action = "space.update"
	// ActionSpaceArchive archives a space.
	ActionSpaceArchive Action = "space.archive"
	// ActionChannelCreate creates a channel.
	ActionChannelCreate Action = "channel.create"
	// ActionChannelRead reads a channel and receives its events.
	ActionChannelRead Action = "channel.read"
	// ActionChannelUpdate changes a channel.
	ActionChannelUpdate Action = "channel.update"
	// ActionChannelArchive archives a channel.
	ActionChannelArchive Action = "channel.archive"
	// ActionThreadCreate creates a thread.
	ActionThreadCreate Action = "thread.create"
	// ActionThreadRead reads a thread and its messages and receives their events.
	ActionThreadRead Action = "thread.read"
	// ActionMessageCreate posts a message.
	ActionMessageCreate Action = "message.create"
	// ActionMessageUpdate edits a message (own messages; admins any).
	ActionMessageUpdate Action = "message.update"
	// ActionMessageDelete deletes (redacts) a message.
	ActionMessageDelete Action = "message.delete"
	// ActionReactionWrite adds and removes the actor's own reactions to a message.
	ActionReactionWrite Action = "reaction.write"
	// ActionReadStateWrite records how far the actor has read.
	ActionReadStateWrite Action = "readstate.write"
	// ActionDraftWrite saves or deletes the actor's drafts.
	ActionDraftWrite Action = "draft.write"
	// ActionDraftRead reads the actor's own draft (getDraft): a read, so it needs what reading
	// the draft's channel needs, not the member role keeping one does.
	ActionDraftRead Action = "draft.read"
	// ActionSettingWrite changes the actor's settings and sidebar.
	ActionSettingWrite Action = "setting.write"
	// ActionGrantAdmin grants and revokes roles on a resource.
	ActionGrantAdmin Action = "grant.admin"
	// ActionAgentCreate creates an agent.
	ActionAgentCreate Action = "agent.create"
	// ActionAgentRead reads agents and receives their events.
	ActionAgentRead Action = "agent.read"
	// ActionEventsCatchUp catches up on the event log from a cursor.
	ActionEventsCatchUp Action = "events.catch_up"
	// ActionSyncSnapshotRead loads the snapshot a client starts from.
	ActionSyncSnapshotRead Action = "sync.snapshot.read"
)

// actions lists every Action in the order of spec 04 and api/operations.yaml.
var actions = []Action{
	ActionInstanceRead, ActionInstanceAdmin, ActionPrincipalRead, ActionPrincipalAdmin,
	ActionPrincipalDeactivate, ActionTokenAdmin, ActionSpaceCreate, ActionSpaceRead, ActionSpaceUpdate, ActionSpaceArchive,
	ActionChannelCreate, ActionChannelRead, ActionChannelUpdate, ActionChannelArchive,
	ActionThreadCreate, ActionThreadRead,
	ActionMessageCreate, ActionMessageUpdate, ActionMessageDelete, ActionReactionWrite,
	ActionReadStateWrite, ActionDraftWrite, ActionDraftRead, ActionSettingWrite, ActionGrantAdmin,
	ActionAgentCreate, ActionAgentRead, ActionEventsCatchUp, ActionSyncSnapshotRead,
}

// Actions returns every action, in the order of spec 04, so that registers and property tests
// (AZ-P1) can range over them. The slice is a copy.
func Actions() []Action {
	return append([]Action(nil), actions...)
}

// Valid reports whether a is one of the actions, so that values read from outside (the
// database, a register file) can be checked before they are trusted.
func (a Action) Valid() bool {
	for _, v := range actions {
		if v == a {
			return true
		}
	}
	return false
}
