package httpapi

import (
	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	syncmod "bothy.example.com/server/internal/sync"
)

// ToAPISnapshot converts a snapshot to the API's Snapshot, the body of getSnapshot and of the
// gateway's ready frame alike (exported for the gateway, so both transports send the same
// JSON). Every list is [] when empty, optional members are omitted, and nothing of the view is
// modified: it may be shared by coalesced callers.
//
// The space and channel views are converted here rather than by the chat module's HTTP
// adapter, which one module's adapter may not import (spec 01); both follow the same
// schemas of api/openapi.yaml, which the integration tests validate every response against.
func ToAPISnapshot(v syncmod.SnapshotView) apigen.Snapshot {
	out := apigen.Snapshot{
		HeadSeq:           v.HeadSeq,
		SyncEpoch:         v.SyncEpoch,
		PermissionVersion: v.PermissionVersion,
		IsOwner:           v.IsOwner,
		Principal:         toAPIPrincipalRef(v.Principal),
		Instance: apigen.InstanceInfo{
			Id: v.Instance.ID, Name: v.Instance.Name, SyncEpoch: v.Instance.SyncEpoch, Version: v.Instance.Version,
		},
		Spaces:        make([]apigen.SpaceView, len(v.Spaces)),
		Channels:      make([]apigen.ChannelView, len(v.Channels)),
		Sidebar:       toAPISidebar(v.Sidebar),
		UnreadThreads: make([]apigen.UnreadThread, len(v.UnreadThreads)),
		ActiveRuns:    make([]apigen.RunSummary, len(v.ActiveRuns)),
		Agents:        make([]apigen.AgentPresence, len(v.Agents)),
		Settings:      make([]apigen.UserSetting, len(v.Settings)),
		Drafts:        make([]apigen.DraftRef, len(v.Drafts)),
		Features:      make([]apigen.EvaluatedFlag, len(v.Features)),
	}
	for i, s := range v.Spaces {
		out.Spaces[i] = toAPISpaceView(s)
	}
	for i, c := range v.Channels {
		out.Channels[i] = toAPIChannelView(c)
	}
	for i, u := range v.UnreadThreads {
		out.UnreadThreads[i] = apigen.UnreadThread{
			ThreadId: u.ThreadID, ChannelId: u.ChannelID, SpaceId: optID(u.SpaceID),
			LastMessageSeq: u.LastMessageSeq, LastReadSeq: u.LastReadSeq,
			UnreadCount: u.UnreadCount, MentionCount: u.MentionCount,
		}
	}
	for i, r := range v.ActiveRuns {
		out.ActiveRuns[i] = apigen.RunSummary{
			Id: r.ID, AgentId: r.AgentID, ThreadId: r.ThreadID, ChannelId: r.ChannelID, RequestedBy: r.RequestedBy,
			InvocationId: optID(r.InvocationID), State: apigen.RunState(r.State), Progress: r.Progress, Version: r.Version,
			CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		}
	}
	for i, a := range v.Agents {
		out.Agents[i] = apigen.AgentPresence{Agent: toAPIPrincipalRef(a.Agent), State: apigen.AgentRuntimeState(a.State)}
		if a.ReportedBillingMode != "" {
			mode := a.ReportedBillingMode
			out.Agents[i].ReportedBillingMode = &mode
		}
	}
	for i, s := range v.Settings {
		out.Settings[i] = toAPISetting(s)
	}
	for i, d := range v.Drafts {
		out.Drafts[i] = apigen.DraftRef{ChannelId: d.ChannelID, ThreadId: optID(d.ThreadID), Version: d.Version}
	}
	for i, f := range v.Features {
		out.Features[i] = apigen.EvaluatedFlag{Key: f.Key, Enabled: f.Enabled}
	}
	return out
}

// toAPIPrincipalRef converts how a principal is named.
func toAPIPrincipalRef(r identity.PrincipalRef) apigen.PrincipalRef {
	return apigen.PrincipalRef{Id: r.ID, Kind: apigen.PrincipalKind(r.Kind), DisplayName: r.DisplayName, Handle: r.Handle}
}

// toAPISpaceView converts a space as the actor sees it; the level is omitted when the actor
// sees the space only through one of its channels.
func toAPISpaceView(v chat.SpaceView) apigen.SpaceView {
	out := apigen.SpaceView{
		Id:           v.Space.ID,
		Name:         v.Space.Name,
		Description:  optString(v.Space.Description),
		Version:      v.Space.Version,
		CreatedAt:    v.Space.CreatedAt,
		Capabilities: toAPICapabilities(v.Capabilities),
	}
	if v.Level != "" {
		level := apigen.Level(v.Level)
		out.Level = &level
	}
	return out
}

// toAPIChannelView converts a channel as the actor sees it: a direct message has no space and
// no name, a standard channel no participants ([]).
func toAPIChannelView(v chat.ChannelView) apigen.ChannelView {
	c := v.Channel
	return apigen.ChannelView{
		Id:             c.ID,
		SpaceId:        optID(c.SpaceID),
		Kind:           apigen.ChannelKind(c.Kind),
		Name:           optString(c.Name),
		Topic:          optString(c.Topic),
		ParticipantIds: ids(c.ParticipantIDs),
		Version:        c.Version,
		CreatedAt:      c.CreatedAt,
		Level:          apigen.Level(v.Level),
		Capabilities:   toAPICapabilities(v.Capabilities),
	}
}

// toAPICapabilities spells the actions as the API's capabilities, in the module's order.
func toAPICapabilities(actions []kernel.Action) []apigen.Capability {
	out := make([]apigen.Capability, len(actions))
	for i, a := range actions {
		out[i] = apigen.Capability(a)
	}
	return out
}

// optString is nil for "", so an empty optional member is omitted.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// optID is nil for uuid.Nil, so an absent id is omitted.
func optID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}
