package httpapi_test

import (
	"context"
	"encoding/json"
	gosync "sync"

	"github.com/google/uuid"

	syncmod "bothy.example.com/server/internal/sync"
)

// fakePersonal implements syncmod.Personal with canned answers, recording what the handlers
// asked; err, when set, is every method's error.
type fakePersonal struct {
	mu    gosync.Mutex
	err   error
	calls []string

	readState syncmod.ReadState
	draft     syncmod.Draft
	setting   syncmod.Setting
	sidebar   syncmod.Sidebar

	threadID    uuid.UUID
	channelID   uuid.UUID
	lastReadSeq int64
	contentMD   string
	key         string
	value       json.RawMessage
	sections    []syncmod.SidebarSection
}

var _ syncmod.Personal = (*fakePersonal)(nil)

func (f *fakePersonal) record(call string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	return f.err
}

func (f *fakePersonal) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakePersonal) UpdateReadState(_ context.Context, threadID uuid.UUID, lastReadSeq int64) (syncmod.ReadState, error) {
	f.threadID, f.lastReadSeq = threadID, lastReadSeq
	return f.readState, f.record("UpdateReadState")
}

func (f *fakePersonal) SaveDraft(_ context.Context, channelID, threadID uuid.UUID, contentMD string) (syncmod.Draft, error) {
	f.channelID, f.threadID, f.contentMD = channelID, threadID, contentMD
	return f.draft, f.record("SaveDraft")
}

func (f *fakePersonal) DeleteDraft(_ context.Context, channelID, threadID uuid.UUID) error {
	f.channelID, f.threadID = channelID, threadID
	return f.record("DeleteDraft")
}

func (f *fakePersonal) GetDraft(_ context.Context, channelID, threadID uuid.UUID) (syncmod.Draft, error) {
	f.channelID, f.threadID = channelID, threadID
	return f.draft, f.record("GetDraft")
}

func (f *fakePersonal) PutSetting(_ context.Context, key string, value json.RawMessage) (syncmod.Setting, error) {
	f.key, f.value = key, value
	return f.setting, f.record("PutSetting")
}

func (f *fakePersonal) PutSidebar(_ context.Context, sections []syncmod.SidebarSection) (syncmod.Sidebar, error) {
	f.sections = sections
	return f.sidebar, f.record("PutSidebar")
}

func (f *fakePersonal) ReadStates(context.Context, uuid.UUID) (map[uuid.UUID]syncmod.ReadState, error) {
	return map[uuid.UUID]syncmod.ReadState{}, f.record("ReadStates")
}

func (f *fakePersonal) Drafts(context.Context, uuid.UUID) ([]syncmod.Draft, error) {
	return []syncmod.Draft{}, f.record("Drafts")
}

func (f *fakePersonal) Settings(context.Context, uuid.UUID) ([]syncmod.Setting, error) {
	return []syncmod.Setting{}, f.record("Settings")
}

func (f *fakePersonal) Sidebar(context.Context, uuid.UUID) (syncmod.Sidebar, error) {
	return f.sidebar, f.record("Sidebar")
}

// fakeCatchUp answers Check and Page from its fields and records the inputs.
type fakeCatchUp struct {
	mu       gosync.Mutex
	check    syncmod.CheckResult
	checkErr error
	page     syncmod.PageResult
	pageErr  error
	checks   []syncmod.CheckInput
	pages    []syncmod.PageInput
}

func (f *fakeCatchUp) Check(_ context.Context, in syncmod.CheckInput) (syncmod.CheckResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checks = append(f.checks, in)
	return f.check, f.checkErr
}

func (f *fakeCatchUp) Page(_ context.Context, in syncmod.PageInput) (syncmod.PageResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pages = append(f.pages, in)
	return f.page, f.pageErr
}

// fakeSnapshot answers Build with its view.
type fakeSnapshot struct {
	view syncmod.SnapshotView
	err  error
}

func (f *fakeSnapshot) Build(context.Context) (syncmod.SnapshotView, error) { return f.view, f.err }
