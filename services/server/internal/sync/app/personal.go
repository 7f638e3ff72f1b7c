package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/domain"
)

// The personal event types the personal-data use cases append (spec 02), each with the owner
// as its only audience.
const (
	// EventReadStateUpdated is appended by UpdateReadState and by OwnReads for an own post, on
	// the thread.
	EventReadStateUpdated = "read_state.updated"
	// EventDraftSaved is appended by SaveDraft, on the channel.
	EventDraftSaved = "draft.saved"
	// EventDraftDeleted is appended by DeleteDraft when a draft was deleted, on the channel.
	EventDraftDeleted = "draft.deleted"
	// EventSettingUpdated is appended by PutSetting, on the owner.
	EventSettingUpdated = "setting.updated"
	// EventSidebarUpdated is appended by PutSidebar, on the owner.
	EventSidebarUpdated = "sidebar.updated"
)

// ErrChannelArchived refuses a draft in an archived channel, which takes no new messages: the
// draft could never be sent.
var ErrChannelArchived = problem.New(problem.ErrConflict, "The channel is archived; it takes no new drafts.")

// errNotInChannel answers a thread that does not lie in the channel of the request like a
// thread that does not exist, whatever the actor may read.
var errNotInChannel = fmt.Errorf("thread not in the channel: %w", problem.ErrNotFound)

// PersonalDeps are what Personal needs, all required.
type PersonalDeps struct {
	// Runner runs each write in one transaction (the caller's, when ctx carries one).
	Runner TxRunner
	// Store keeps the read states, drafts, settings and sidebars.
	Store PersonalStore
	// Places tells where threads and channels lie (bound to the chat module).
	Places Places
	// Authorizer decides readstate.write, draft.write, draft.read and setting.write for the actor.
	Authorizer authorize.Authorizer
	// Appender appends each write's personal event in its transaction.
	Appender kernel.Appender
	// Clock is the time drafts and the other rows are saved at.
	Clock clock.Clock
	// Config holds sync.max_setting_bytes and sync.max_draft_bytes.
	Config PersonalConfig
}

// Personal implements sync.Personal: the personal-data use cases, each authorizing the actor
// in ctx itself once it knows where the changed thread or channel lies.
type Personal struct {
	runner     TxRunner
	store      PersonalStore
	places     Places
	authorizer authorize.Authorizer
	appender   kernel.Appender
	clock      clock.Clock
	cfg        PersonalConfig
}

var _ syncmod.Personal = (*Personal)(nil)

// NewPersonal returns the personal-data use cases over deps; it fails for a missing dependency
// or an invalid configuration (PersonalConfig.Validate), so wiring mistakes stop the process
// at start.
func NewPersonal(deps PersonalDeps) (*Personal, error) {
	var errs []error
	for _, d := range []struct {
		name    string
		missing bool
	}{
		{"runner", deps.Runner == nil}, {"store", deps.Store == nil}, {"places", deps.Places == nil},
		{"authorizer", deps.Authorizer == nil}, {"appender", deps.Appender == nil}, {"clock", deps.Clock == nil},
	} {
		if d.missing {
			errs = append(errs, fmt.Errorf("%s is nil", d.name))
		}
	}
	errs = append(errs, deps.Config.Validate())
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("sync: new personal: %w", err)
	}
	return &Personal{
		runner: deps.Runner, store: deps.Store, places: deps.Places, authorizer: deps.Authorizer,
		appender: deps.Appender, clock: deps.Clock, cfg: deps.Config,
	}, nil
}

// owner returns the principal whose data a write changes: the actor in ctx.
func owner(ctx context.Context) (uuid.UUID, error) {
	a, ok := actor.From(ctx)
	if !ok {
		return uuid.Nil, problem.ErrUnauthenticated
	}
	return a.PrincipalID, nil
}

// UpdateReadState implements sync.Personal.
func (p *Personal) UpdateReadState(ctx context.Context, threadID uuid.UUID, lastReadSeq int64) (syncmod.ReadState, error) {
	rs, err := p.updateReadState(ctx, threadID, lastReadSeq)
	if err != nil {
		return syncmod.ReadState{}, fmt.Errorf("sync: update read state: %w", err)
	}
	return rs, nil
}

func (p *Personal) updateReadState(ctx context.Context, threadID uuid.UUID, lastReadSeq int64) (syncmod.ReadState, error) {
	who, err := owner(ctx)
	if err != nil {
		return syncmod.ReadState{}, err
	}
	if err := domain.CheckLastReadSeq(lastReadSeq); err != nil {
		return syncmod.ReadState{}, err
	}
	th, err := p.places.Thread(ctx, threadID)
	if err != nil {
		return syncmod.ReadState{}, err
	}
	res := authorize.Resource{
		Kind: kernel.ResourceThread, ID: threadID, SpaceID: th.SpaceID, ChannelID: th.ChannelID, ThreadID: threadID,
	}
	if err := p.authorizer.Authorize(ctx, kernel.ActionReadStateWrite, res); err != nil {
		return syncmod.ReadState{}, err
	}
	in := syncmod.ReadState{
		PrincipalID: who, ThreadID: threadID, ChannelID: th.ChannelID,
		LastReadSeq: domain.ClampLastReadSeq(lastReadSeq, th.LastMessageSeq),
	}
	var out syncmod.ReadState
	err = p.runner.RunInTx(ctx, func(ctx context.Context) error {
		stored, err := p.store.UpsertReadState(ctx, in, p.clock.Now())
		if err != nil {
			return err
		}
		out = stored
		return p.appender.Append(ctx, kernel.Event{
			Type: EventReadStateUpdated, ActorID: who, AudienceID: who,
			SpaceID: th.SpaceID, ChannelID: stored.ChannelID, ThreadID: threadID,
			ResourceKind: kernel.ResourceThread, ResourceID: threadID,
			Payload: readStatePayload{
				ThreadID: threadID, ChannelID: stored.ChannelID, LastReadSeq: stored.LastReadSeq, Version: stored.Version,
			},
		})
	})
	return out, err
}

// readStatePayload is the payload of read_state.updated (domain register).
type readStatePayload struct {
	ThreadID    uuid.UUID `json:"thread_id"`
	ChannelID   uuid.UUID `json:"channel_id"`
	LastReadSeq int64     `json:"last_read_seq"`
	Version     int64     `json:"version"`
}

// SaveDraft implements sync.Personal.
func (p *Personal) SaveDraft(ctx context.Context, channelID, threadID uuid.UUID, contentMD string) (syncmod.Draft, error) {
	d, err := p.saveDraft(ctx, channelID, threadID, contentMD)
	if err != nil {
		return syncmod.Draft{}, fmt.Errorf("sync: save draft: %w", err)
	}
	return d, nil
}

func (p *Personal) saveDraft(ctx context.Context, channelID, threadID uuid.UUID, contentMD string) (syncmod.Draft, error) {
	who, err := owner(ctx)
	if err != nil {
		return syncmod.Draft{}, err
	}
	if err := domain.CheckDraftContent(contentMD, p.cfg.MaxDraftBytes); err != nil {
		return syncmod.Draft{}, err
	}
	ch, err := p.draftChannel(ctx, kernel.ActionDraftWrite, channelID, threadID)
	if err != nil {
		return syncmod.Draft{}, err
	}
	// After authorization, so that an archived channel the actor may not read answers
	// not_found like any other.
	if ch.Archived {
		return syncmod.Draft{}, ErrChannelArchived
	}
	in := syncmod.Draft{
		PrincipalID: who, ChannelID: channelID, ThreadID: threadID, ContentMD: contentMD, UpdatedAt: p.clock.Now(),
	}
	var out syncmod.Draft
	err = p.runner.RunInTx(ctx, func(ctx context.Context) error {
		stored, err := p.store.UpsertDraft(ctx, in)
		if err != nil {
			return err
		}
		out = stored
		return p.appender.Append(ctx, draftEvent(EventDraftSaved, who, ch, threadID, draftSavedPayload{
			ChannelID: channelID, ThreadID: threadID, ContentMD: stored.ContentMD, Version: stored.Version,
		}))
	})
	return out, err
}

// DeleteDraft implements sync.Personal.
func (p *Personal) DeleteDraft(ctx context.Context, channelID, threadID uuid.UUID) error {
	if err := p.deleteDraft(ctx, channelID, threadID); err != nil {
		return fmt.Errorf("sync: delete draft: %w", err)
	}
	return nil
}

func (p *Personal) deleteDraft(ctx context.Context, channelID, threadID uuid.UUID) error {
	who, err := owner(ctx)
	if err != nil {
		return err
	}
	ch, err := p.draftChannel(ctx, kernel.ActionDraftWrite, channelID, threadID)
	if err != nil {
		return err
	}
	return p.runner.RunInTx(ctx, func(ctx context.Context) error {
		gone, found, err := p.store.DeleteDraft(ctx, who, channelID, threadID)
		if err != nil || !found {
			return err
		}
		// The deletion is one more change of the draft: clients that hold version n apply it.
		return p.appender.Append(ctx, draftEvent(EventDraftDeleted, who, ch, threadID, draftDeletedPayload{
			ChannelID: channelID, ThreadID: threadID, Version: gone.Version + 1,
		}))
	})
}

// GetDraft implements sync.Personal: the channel and thread are checked and draft.read
// authorized (whoever reads the channel reads its own draft there), then the draft is read;
// none is problem.ErrNotFound.
func (p *Personal) GetDraft(ctx context.Context, channelID, threadID uuid.UUID) (syncmod.Draft, error) {
	who, err := owner(ctx)
	if err != nil {
		return syncmod.Draft{}, fmt.Errorf("sync: get draft: %w", err)
	}
	if _, err := p.draftChannel(ctx, kernel.ActionDraftRead, channelID, threadID); err != nil {
		return syncmod.Draft{}, fmt.Errorf("sync: get draft: %w", err)
	}
	d, found, err := p.store.Draft(ctx, who, channelID, threadID)
	if err != nil {
		return syncmod.Draft{}, fmt.Errorf("sync: get draft: %w", err)
	}
	if !found {
		return syncmod.Draft{}, fmt.Errorf("sync: get draft: %w", problem.ErrNotFound)
	}
	return d, nil
}

// draftChannel resolves the channel of a draft, checks that the thread (unless uuid.Nil) lies
// in it, and authorizes action (draft.write, or draft.read for getDraft) on the channel.
func (p *Personal) draftChannel(ctx context.Context, action kernel.Action, channelID, threadID uuid.UUID) (ChannelPlace, error) {
	ch, err := p.places.Channel(ctx, channelID)
	if err != nil {
		return ChannelPlace{}, err
	}
	// Authorize on the channel before looking at the thread, so the answer for an actor
	// without the action does not depend on the thread it names.
	res := authorize.Resource{Kind: kernel.ResourceChannel, ID: channelID, SpaceID: ch.SpaceID, ChannelID: channelID}
	if err := p.authorizer.Authorize(ctx, action, res); err != nil {
		return ChannelPlace{}, err
	}
	if threadID != uuid.Nil {
		th, err := p.places.Thread(ctx, threadID)
		if err != nil {
			return ChannelPlace{}, err
		}
		if th.ChannelID != channelID {
			return ChannelPlace{}, errNotInChannel
		}
	}
	return ch, nil
}

// draftEvent is a draft event of who in channel ch, placed in the thread too for a thread's
// draft.
func draftEvent(typ string, who uuid.UUID, ch ChannelPlace, threadID uuid.UUID, payload any) kernel.Event {
	return kernel.Event{
		Type: typ, ActorID: who, AudienceID: who,
		SpaceID: ch.SpaceID, ChannelID: ch.ChannelID, ThreadID: threadID,
		ResourceKind: kernel.ResourceChannel, ResourceID: ch.ChannelID,
		Payload: payload,
	}
}

// draftSavedPayload is the payload of draft.saved (domain register).
type draftSavedPayload struct {
	ChannelID uuid.UUID `json:"channel_id"`
	ThreadID  uuid.UUID `json:"thread_id,omitzero"` // absent for the channel's own draft
	ContentMD string    `json:"content_md"`
	Version   int64     `json:"version"`
}

// draftDeletedPayload is the payload of draft.deleted (domain register).
type draftDeletedPayload struct {
	ChannelID uuid.UUID `json:"channel_id"`
	ThreadID  uuid.UUID `json:"thread_id,omitzero"` // absent for the channel's own draft
	Version   int64     `json:"version"`
}

// PutSetting implements sync.Personal.
func (p *Personal) PutSetting(ctx context.Context, key string, value json.RawMessage) (syncmod.Setting, error) {
	s, err := p.putSetting(ctx, key, value)
	if err != nil {
		return syncmod.Setting{}, fmt.Errorf("sync: put setting: %w", err)
	}
	return s, nil
}

func (p *Personal) putSetting(ctx context.Context, key string, value json.RawMessage) (syncmod.Setting, error) {
	who, err := owner(ctx)
	if err != nil {
		return syncmod.Setting{}, err
	}
	normalized, err := domain.NormalizeSetting(key, value, p.cfg.MaxSettingBytes)
	if err != nil {
		return syncmod.Setting{}, err
	}
	if err := p.authorizeSelf(ctx, who); err != nil {
		return syncmod.Setting{}, err
	}
	var out syncmod.Setting
	err = p.runner.RunInTx(ctx, func(ctx context.Context) error {
		stored, err := p.store.UpsertSetting(ctx, syncmod.Setting{PrincipalID: who, Key: key, Value: normalized}, p.clock.Now())
		if err != nil {
			return err
		}
		out = stored
		return p.appender.Append(ctx, principalEvent(EventSettingUpdated, who, settingPayload{
			Key: stored.Key, Value: stored.Value, Version: stored.Version,
		}))
	})
	return out, err
}

// settingPayload is the payload of setting.updated (domain register).
type settingPayload struct {
	Key     string          `json:"key"`
	Value   json.RawMessage `json:"value"`
	Version int64           `json:"version"`
}

// PutSidebar implements sync.Personal.
func (p *Personal) PutSidebar(ctx context.Context, sections []syncmod.SidebarSection) (syncmod.Sidebar, error) {
	sb, err := p.putSidebar(ctx, sections)
	if err != nil {
		return syncmod.Sidebar{}, fmt.Errorf("sync: put sidebar: %w", err)
	}
	return sb, nil
}

func (p *Personal) putSidebar(ctx context.Context, sections []syncmod.SidebarSection) (syncmod.Sidebar, error) {
	who, err := owner(ctx)
	if err != nil {
		return syncmod.Sidebar{}, err
	}
	normalized, err := domain.NormalizeSidebar(toDomainSections(sections), p.cfg.Sidebar)
	if err != nil {
		return syncmod.Sidebar{}, err
	}
	if err := p.authorizeSelf(ctx, who); err != nil {
		return syncmod.Sidebar{}, err
	}
	in := syncmod.Sidebar{PrincipalID: who, Sections: fromDomainSections(normalized)}
	var out syncmod.Sidebar
	err = p.runner.RunInTx(ctx, func(ctx context.Context) error {
		stored, err := p.store.UpsertSidebar(ctx, in, p.clock.Now())
		if err != nil {
			return err
		}
		out = stored
		return p.appender.Append(ctx, principalEvent(EventSidebarUpdated, who, sidebarPayload{
			Sections: toDomainSections(stored.Sections), Version: stored.Version,
		}))
	})
	return out, err
}

// sidebarPayload is the payload of sidebar.updated (domain register); each section in the
// form domain.SidebarSection gives it.
type sidebarPayload struct {
	Sections []domain.SidebarSection `json:"sections"`
	Version  int64                   `json:"version"`
}

// authorizeSelf authorizes setting.write on the owner's own principal, the resource of
// settings and the sidebar.
func (p *Personal) authorizeSelf(ctx context.Context, who uuid.UUID) error {
	return p.authorizer.Authorize(ctx, kernel.ActionSettingWrite, authorize.Resource{Kind: kernel.ResourcePrincipal, ID: who})
}

// principalEvent is a personal event on the owner's principal (settings, the sidebar).
func principalEvent(typ string, who uuid.UUID, payload any) kernel.Event {
	return kernel.Event{
		Type: typ, ActorID: who, AudienceID: who,
		ResourceKind: kernel.ResourcePrincipal, ResourceID: who,
		Payload: payload,
	}
}

// toDomainSections converts port sections to the domain's (the same fields), never nil and
// with no nil channel list, since sidebar.updated may not carry a JSON null.
func toDomainSections(in []syncmod.SidebarSection) []domain.SidebarSection {
	out := make([]domain.SidebarSection, len(in))
	for i, s := range in {
		out[i] = domain.SidebarSection(s)
		if out[i].ChannelIDs == nil {
			out[i].ChannelIDs = []uuid.UUID{}
		}
	}
	return out
}

// fromDomainSections converts domain sections to the port's (the same fields), never nil.
func fromDomainSections(in []domain.SidebarSection) []syncmod.SidebarSection {
	out := make([]syncmod.SidebarSection, len(in))
	for i, s := range in {
		out[i] = syncmod.SidebarSection(s)
	}
	return out
}

// ReadStates implements sync.Personal.
func (p *Personal) ReadStates(ctx context.Context, principalID uuid.UUID) (map[uuid.UUID]syncmod.ReadState, error) {
	list, err := p.ReadStateList(ctx, principalID)
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]syncmod.ReadState, len(list))
	for _, rs := range list {
		out[rs.ThreadID] = rs
	}
	return out, nil
}

// ReadStateList returns the principal's read states ordered by thread id; empty, not nil,
// when there are none. Errors are the store's, wrapped.
func (p *Personal) ReadStateList(ctx context.Context, principalID uuid.UUID) ([]syncmod.ReadState, error) {
	list, err := p.store.ReadStates(ctx, principalID)
	if err != nil {
		return nil, fmt.Errorf("sync: read states: %w", err)
	}
	if list == nil {
		list = []syncmod.ReadState{}
	}
	return list, nil
}

// PersonalData implements PersonalSource: the store's one round trip, every list non-nil.
func (p *Personal) PersonalData(ctx context.Context, principalID uuid.UUID) (PersonalData, error) {
	d, err := p.store.PersonalData(ctx, principalID)
	if err != nil {
		return PersonalData{}, fmt.Errorf("sync: personal data: %w", err)
	}
	d.ReadStates, d.Settings, d.Drafts = nonNil(d.ReadStates), nonNil(d.Settings), nonNil(d.Drafts)
	if d.Sidebar.Sections == nil {
		d.Sidebar.Sections = []syncmod.SidebarSection{}
	}
	if d.Sidebar.Version == 0 {
		d.Sidebar.PrincipalID = principalID
	}
	return d, nil
}

// Drafts implements sync.Personal.
func (p *Personal) Drafts(ctx context.Context, principalID uuid.UUID) ([]syncmod.Draft, error) {
	list, err := p.store.Drafts(ctx, principalID)
	if err != nil {
		return nil, fmt.Errorf("sync: drafts: %w", err)
	}
	if list == nil {
		list = []syncmod.Draft{}
	}
	return list, nil
}

// Settings implements sync.Personal.
func (p *Personal) Settings(ctx context.Context, principalID uuid.UUID) ([]syncmod.Setting, error) {
	list, err := p.store.Settings(ctx, principalID)
	if err != nil {
		return nil, fmt.Errorf("sync: settings: %w", err)
	}
	if list == nil {
		list = []syncmod.Setting{}
	}
	return list, nil
}

// Sidebar implements sync.Personal.
func (p *Personal) Sidebar(ctx context.Context, principalID uuid.UUID) (syncmod.Sidebar, error) {
	sb, found, err := p.store.Sidebar(ctx, principalID)
	if err != nil {
		return syncmod.Sidebar{}, fmt.Errorf("sync: sidebar: %w", err)
	}
	if !found {
		return syncmod.Sidebar{PrincipalID: principalID, Sections: []syncmod.SidebarSection{}}, nil
	}
	if sb.Sections == nil {
		sb.Sections = []syncmod.SidebarSection{}
	}
	return sb, nil
}
