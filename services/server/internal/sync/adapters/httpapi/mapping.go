package httpapi

import (
	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
)

// Validation errors of the request's shape, which the generated decoder lets through.
var (
	// errNoBody: the operation's required body is missing.
	errNoBody = problem.Validation(problem.FieldError{Field: "body", Message: "is required"})
	// errNoValue: a putSetting body without value (a JSON null is a value, refused by the
	// use case).
	errNoValue = problem.Validation(problem.FieldError{Field: "value", Message: "is required"})
	// errNoSections: a putSidebar body without sections ([] clears the sidebar).
	errNoSections = problem.Validation(problem.FieldError{Field: "sections", Message: "is required"})
)

// toAPIReadState converts a read state; the owner is the actor and not repeated.
func toAPIReadState(r syncmod.ReadState) apigen.ReadState {
	return apigen.ReadState{ThreadId: r.ThreadID, ChannelId: r.ChannelID, LastReadSeq: r.LastReadSeq, Version: r.Version}
}

// toAPIDraft converts a draft; thread_id is omitted for the channel's own draft.
func toAPIDraft(d syncmod.Draft) apigen.Draft {
	out := apigen.Draft{ChannelId: d.ChannelID, ContentMd: d.ContentMD, Version: d.Version}
	if d.ThreadID != uuid.Nil {
		id := d.ThreadID
		out.ThreadId = &id
	}
	return out
}

// toAPISetting converts a setting with its value as stored.
func toAPISetting(s syncmod.Setting) apigen.UserSetting {
	return apigen.UserSetting{Key: s.Key, Value: s.Value, Version: s.Version}
}

// toAPISidebar converts a sidebar; no sections and no channels are [], never null.
func toAPISidebar(sb syncmod.Sidebar) apigen.SidebarState {
	sections := make([]apigen.SidebarSection, len(sb.Sections))
	for i, sec := range sb.Sections {
		sections[i] = apigen.SidebarSection{Key: sec.Key, Title: sec.Title, Collapsed: sec.Collapsed, ChannelIds: ids(sec.ChannelIDs)}
	}
	return apigen.SidebarState{Sections: sections, Version: sb.Version}
}

// toSections converts the sections of a putSidebar body as sent (the use case checks and
// deduplicates them); a section without channel_ids has none.
func toSections(in []apigen.SidebarSection) []syncmod.SidebarSection {
	out := make([]syncmod.SidebarSection, len(in))
	for i, sec := range in {
		out[i] = syncmod.SidebarSection{Key: sec.Key, Title: sec.Title, Collapsed: sec.Collapsed, ChannelIDs: ids(sec.ChannelIds)}
	}
	return out
}

// ids is the list itself, or [] for nil.
func ids(list []uuid.UUID) []uuid.UUID {
	if list == nil {
		return []uuid.UUID{}
	}
	return list
}

// toAPIConsumer maps a consumer to the API's Consumer.
func toAPIConsumer(c syncmod.Consumer) apigen.Consumer {
	return apigen.Consumer{
		Name: c.Name, AckedSeq: c.AckedSeq, SyncEpoch: c.SyncEpoch,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
	}
}
