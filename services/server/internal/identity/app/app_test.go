package app_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/app"
	"bothy.example.com/server/internal/identity/domain"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

var (
	start   = time.Date(2026, 12, 1, 9, 30, 15, 0, time.UTC)
	errDB   = errors.New("database on fire")
	testTTL = 90 * 24 * time.Hour
)

// env is a Service over the fake store with a fake clock.
type env struct {
	svc    *app.Service
	store  *fakeStore
	tx     *fakeTx
	clock  *clock.Fake
	log    *bytes.Buffer
	events *fakeAppender
	owners *fakeOwners
}

// instanceID is the instance of the fake Instance: the actor of events appended without one.
var instanceID = uuid.MustParse("0190a6b2-7c1e-7d3a-9f00-0000000000aa")

func newEnv(t *testing.T, ttl time.Duration) env {
	t.Helper()
	e := env{store: newFakeStore(), tx: &fakeTx{}, clock: clock.NewFake(start), log: &bytes.Buffer{}, events: &fakeAppender{}, owners: &fakeOwners{}}
	svc, err := app.New(app.Deps{
		Store:    e.store,
		Tx:       e.tx,
		Clock:    e.clock,
		Logger:   slog.New(slog.NewJSONHandler(e.log, nil)),
		Config:   app.Config{TokenTTL: ttl, LastUsedFlushInterval: time.Minute, LastUsedFinalFlushTimeout: 5 * time.Second},
		Appender: e.events,
		Owners:   e.owners,
		Instance: fakeInstance{id: instanceID},
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.svc = svc
	return e
}

func (e env) person(t *testing.T, handle string) identity.Principal {
	t.Helper()
	p, err := e.svc.CreatePerson(t.Context(), identity.PersonInput{DisplayName: handle, Handle: handle, Email: handle + "@example.com"})
	if err != nil {
		t.Fatalf("CreatePerson %s: %v", handle, err)
	}
	return p
}

func (e env) issue(t *testing.T, id uuid.UUID, dev *identity.DeviceInput) identity.IssuedToken {
	t.Helper()
	tok, err := e.svc.Tokens().Issue(t.Context(), id, dev)
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	return tok
}

func TestNewRefusesMissingDepsAndBadConfig(t *testing.T) {
	t.Parallel()
	good := app.Deps{
		Store: newFakeStore(), Tx: &fakeTx{}, Clock: clock.NewFake(start), Logger: slog.New(slog.DiscardHandler),
		Config:   app.Config{TokenTTL: 0, LastUsedFlushInterval: time.Second, LastUsedFinalFlushTimeout: 5 * time.Second},
		Appender: &fakeAppender{}, Owners: &fakeOwners{}, Instance: fakeInstance{id: instanceID},
	}
	if _, err := app.New(good); err != nil {
		t.Fatalf("New with every dependency: %v", err)
	}
	tests := []struct {
		name   string
		change func(*app.Deps)
		want   string
	}{
		{"store", func(d *app.Deps) { d.Store = nil }, "store is nil"},
		{"tx", func(d *app.Deps) { d.Tx = nil }, "transaction runner is nil"},
		{"clock", func(d *app.Deps) { d.Clock = nil }, "clock is nil"},
		{"logger", func(d *app.Deps) { d.Logger = nil }, "logger is nil"},
		{"appender", func(d *app.Deps) { d.Appender = nil }, "appender is nil"},
		{"owners", func(d *app.Deps) { d.Owners = nil }, "owners is nil"},
		{"instance", func(d *app.Deps) { d.Instance = nil }, "instance is nil"},
		{"negative page size", func(d *app.Deps) { d.Config.TokensPageSize = -1 }, "identity.tokens_page_size"},
		{"negative ttl", func(d *app.Deps) { d.Config.TokenTTL = -time.Second }, "identity.token_ttl"},
		{"zero interval", func(d *app.Deps) { d.Config.LastUsedFlushInterval = 0 }, "identity.last_used_flush_interval"},
		{"zero final flush timeout", func(d *app.Deps) { d.Config.LastUsedFinalFlushTimeout = 0 }, "identity.last_used_final_flush_timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := good
			tc.change(&d)
			if _, err := app.New(d); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestConfigFrom(t *testing.T) {
	t.Parallel()
	r := config.NewRegister()
	// The register of this test mirrors the package's keys, so Load can read them.
	for _, k := range []config.Key{app.KeyTokenTTL, app.KeyLastUsedFlushInterval, app.KeyTokensPageSize, app.KeyLastUsedFinalFlushTimeout, app.KeyPrincipalsPageSize} {
		r.Define(k.Name, k.Kind, k.Default, k.Meaning)
	}
	cfg, err := r.Load("", []string{"BOTHY_IDENTITY_TOKEN_TTL=0s"})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	got := app.ConfigFrom(cfg)
	if err := cfg.Err(); err != nil {
		t.Fatalf("config: %v", err)
	}
	if got != (app.Config{TokenTTL: 0, LastUsedFlushInterval: time.Minute, TokensPageSize: 100, LastUsedFinalFlushTimeout: 5 * time.Second, PrincipalsPageSize: 100}) {
		t.Errorf("ConfigFrom = %+v, want no expiry and the default 1m flush", got)
	}
	if app.KeyTokenTTL.Default != "2160h" {
		t.Errorf("identity.token_ttl default = %s, want 2160h", app.KeyTokenTTL.Default)
	}
}

func TestCreatePrincipals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, testTTL)
	ctx := t.Context()

	alex, err := e.svc.CreatePerson(ctx, identity.PersonInput{DisplayName: "Alex", Handle: "Alex", Email: "alex@example.com"})
	if err != nil {
		t.Fatalf("CreatePerson: %v", err)
	}
	if alex.Kind != actor.KindPerson || alex.Handle != "alex" || alex.ID == uuid.Nil || !alex.CreatedAt.Equal(start) {
		t.Errorf("person = %+v", alex)
	}
	bot, err := e.svc.CreateApp(ctx, identity.AppInput{DisplayName: "Build bot", Handle: "build-bot", Scopes: []string{"messages:read"}})
	if err != nil {
		t.Fatalf("CreateApp: %v", err)
	}
	if bot.Kind != actor.KindApp || !slices.Equal(bot.Scopes, []string{"messages:read"}) {
		t.Errorf("app = %+v", bot)
	}
	robin, err := e.svc.CreateAgentPrincipal(ctx, identity.AgentInput{DisplayName: "Robin", Handle: "robin"})
	if err != nil {
		t.Fatalf("CreateAgentPrincipal: %v", err)
	}
	if robin.Kind != actor.KindAgent || robin.Email != "" {
		t.Errorf("agent = %+v", robin)
	}

	got, err := e.svc.Get(ctx, alex.ID)
	if err != nil || got.ID != alex.ID || got.Email != "alex@example.com" {
		t.Errorf("Get = %+v, %v", got, err)
	}
	if _, err := e.svc.Get(ctx, uuid.New()); !errors.Is(err, identity.ErrPrincipalNotFound) {
		t.Errorf("Get unknown: err = %v, want ErrPrincipalNotFound", err)
	}

	tests := []struct {
		name   string
		create func() error
		want   error
	}{
		{"taken handle in another case", func() error {
			_, err := e.svc.CreatePerson(ctx, identity.PersonInput{DisplayName: "Alex", Handle: "ALEX", Email: "alex@example.com"})
			return err
		}, identity.ErrHandleTaken},
		{"app taking an agent's handle", func() error {
			_, err := e.svc.CreateApp(ctx, identity.AppInput{DisplayName: "R", Handle: "Robin", Scopes: []string{"agents:read"}})
			return err
		}, identity.ErrHandleTaken},
		{"agent taking an app's handle", func() error {
			_, err := e.svc.CreateAgentPrincipal(ctx, identity.AgentInput{DisplayName: "B", Handle: "build-bot"})
			return err
		}, identity.ErrHandleTaken},
		{"invalid person", func() error {
			_, err := e.svc.CreatePerson(ctx, identity.PersonInput{Handle: "sam"})
			return err
		}, problem.ErrValidation},
		{"invalid app", func() error {
			_, err := e.svc.CreateApp(ctx, identity.AppInput{DisplayName: "S", Handle: "sam"})
			return err
		}, problem.ErrValidation},
		{"invalid agent", func() error {
			_, err := e.svc.CreateAgentPrincipal(ctx, identity.AgentInput{DisplayName: "S"})
			return err
		}, problem.ErrValidation},
	}
	for _, tc := range tests {
		if err := tc.create(); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	if n := e.store.count("InsertPrincipal"); n != 6 {
		t.Errorf("InsertPrincipal calls = %d, want 6 (invalid input never reaches the store)", n)
	}
}

func TestRefs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, testTTL)
	ctx := t.Context()
	alex, sam := e.person(t, "alex"), e.person(t, "sam")
	unknown := uuid.New()

	refs, err := e.svc.Refs(ctx, []uuid.UUID{alex.ID, sam.ID, alex.ID, uuid.Nil, unknown})
	if err != nil {
		t.Fatalf("Refs: %v", err)
	}
	if len(refs) != 2 || refs[alex.ID] != alex.Ref() || refs[sam.ID] != sam.Ref() {
		t.Errorf("Refs = %v, want alex and sam only", refs)
	}
	if n := e.store.count("Refs"); n != 1 {
		t.Errorf("store Refs calls = %d, want 1", n)
	}
	refs, err = e.svc.Refs(ctx, []uuid.UUID{uuid.Nil})
	if err != nil || len(refs) != 0 || refs == nil {
		t.Errorf("Refs(nil id) = %v, %v; want an empty map", refs, err)
	}
	if n := e.store.count("Refs"); n != 1 {
		t.Errorf("store Refs calls = %d, want still 1 (nothing to look up)", n)
	}

	ref, err := e.svc.Ref(ctx, sam.ID)
	if err != nil || ref != sam.Ref() {
		t.Errorf("Ref = %+v, %v", ref, err)
	}
	if _, err := e.svc.Ref(ctx, unknown); !errors.Is(err, identity.ErrPrincipalNotFound) {
		t.Errorf("Ref unknown: err = %v", err)
	}
	e.store.fail("Refs", errDB)
	if _, err := e.svc.Ref(ctx, sam.ID); !errors.Is(err, errDB) {
		t.Errorf("Ref with a failing store: err = %v, want the store's", err)
	}
}

func TestByHandles(t *testing.T) {
	t.Parallel()
	e := newEnv(t, testTTL)
	ctx := t.Context()
	alex, sam, robin := e.person(t, "alex"), e.person(t, "sam"), e.person(t, "robin")
	e.store.deactivate(robin.ID, start)

	refs, err := e.svc.ByHandles(ctx, []string{"alex", "SAM", "Alex", "robin", "nobody", "-not a handle-", ""})
	if err != nil {
		t.Fatalf("ByHandles: %v", err)
	}
	if len(refs) != 2 || refs["alex"] != alex.Ref() || refs["sam"] != sam.Ref() {
		t.Errorf("ByHandles = %v, want alex and sam only (robin is deactivated)", refs)
	}
	if n := e.store.count("ActiveByHandles"); n != 1 {
		t.Errorf("store ActiveByHandles calls = %d, want 1", n)
	}
	refs, err = e.svc.ByHandles(ctx, []string{"x", "@alex"})
	if err != nil || len(refs) != 0 || refs == nil {
		t.Errorf("ByHandles(invalid handles) = %v, %v; want an empty map", refs, err)
	}
	if n := e.store.count("ActiveByHandles"); n != 1 {
		t.Errorf("store ActiveByHandles calls = %d, want still 1 (nothing to look up)", n)
	}
	e.store.fail("ActiveByHandles", errDB)
	if _, err := e.svc.ByHandles(ctx, []string{"sam"}); !errors.Is(err, errDB) {
		t.Errorf("ByHandles with a failing store: err = %v, want the store's", err)
	}
}

func TestIssue(t *testing.T) {
	t.Parallel()
	e := newEnv(t, testTTL)
	ctx := t.Context()
	sam := e.person(t, "sam")
	bot, err := e.svc.CreateApp(ctx, identity.AppInput{DisplayName: "Bot", Handle: "bot", Scopes: []string{"messages:write", "events:subscribe"}})
	if err != nil {
		t.Fatalf("CreateApp: %v", err)
	}

	plain := e.issue(t, sam.ID, nil)
	if !domain.WellFormed(plain.Token.Reveal()) || plain.PrincipalID != sam.ID || plain.DeviceID != uuid.Nil ||
		plain.Scopes != nil || !plain.ExpiresAt.Equal(start.Add(testTTL)) {
		t.Errorf("token = %+v", plain)
	}
	stored := e.store.token(plain.TokenID)
	if stored.Hash != domain.HashToken(plain.Token.Reveal()) {
		t.Error("the store does not hold the SHA-256 of the secret")
	}

	withDevice := e.issue(t, sam.ID, &identity.DeviceInput{Name: "Sam's laptop"})
	dev, err := e.svc.Devices().Get(ctx, withDevice.DeviceID)
	if err != nil || dev.Status != identity.DevicePending || dev.PrincipalID != sam.ID || dev.Name != "Sam's laptop" {
		t.Errorf("device = %+v, %v; want Sam's pending laptop", dev, err)
	}
	if e.store.token(withDevice.TokenID).DeviceID != dev.ID {
		t.Error("the token is not bound to the device")
	}

	appTok := e.issue(t, bot.ID, &identity.DeviceInput{Name: "ci", Status: identity.DeviceApproved})
	if !slices.Equal(appTok.Scopes, []string{"events:subscribe", "messages:write"}) {
		t.Errorf("app token scopes = %v", appTok.Scopes)
	}
	if plain.Token.Reveal() == withDevice.Token.Reveal() || withDevice.Token.Reveal() == appTok.Token.Reveal() {
		t.Error("two issued secrets are equal")
	}

	e.store.deactivate(bot.ID, start)
	inserts := e.store.count("InsertToken")
	tests := []struct {
		name      string
		principal uuid.UUID
		dev       *identity.DeviceInput
		want      error
	}{
		{"unknown principal", uuid.New(), nil, identity.ErrPrincipalNotFound},
		{"deactivated principal", bot.ID, nil, identity.ErrPrincipalDeactivated},
		{"device without name", sam.ID, &identity.DeviceInput{Status: identity.DeviceApproved}, problem.ErrValidation},
		{"revoked device", sam.ID, &identity.DeviceInput{Name: "x", Status: identity.DeviceRevoked}, problem.ErrValidation},
	}
	for _, tc := range tests {
		if _, err := e.svc.Tokens().Issue(ctx, tc.principal, tc.dev); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	if n := e.store.count("InsertToken"); n != inserts {
		t.Errorf("refused issues stored %d tokens", n-inserts)
	}
}

func TestIssueWithoutExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	tok := e.issue(t, e.person(t, "robin").ID, nil)
	if !tok.ExpiresAt.IsZero() {
		t.Errorf("ExpiresAt = %v, want zero with identity.token_ttl 0", tok.ExpiresAt)
	}
	e.clock.Advance(100 * 365 * 24 * time.Hour)
	if _, err := e.svc.Authenticate(t.Context(), tok.Token.Reveal()); err != nil {
		t.Errorf("a token without expiry after a century: %v", err)
	}
}

func TestIssueStoreFailures(t *testing.T) {
	t.Parallel()
	for _, method := range []string{"Principal", "InsertDevice", "InsertToken"} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, testTTL)
			alex := e.person(t, "alex")
			e.store.fail(method, errDB)
			tok, err := e.svc.Tokens().Issue(t.Context(), alex.ID, &identity.DeviceInput{Name: "phone"})
			if !errors.Is(err, errDB) {
				t.Fatalf("err = %v, want the store's", err)
			}
			if tok.Token != "" || tok.TokenID != uuid.Nil {
				t.Errorf("a failed issue returned %+v", tok)
			}
		})
	}
	e := newEnv(t, testTTL)
	svc, err := app.New(app.Deps{
		Store: e.store, Tx: e.tx, Clock: e.clock, Logger: slog.New(slog.DiscardHandler),
		Appender: e.events, Owners: e.owners, Instance: fakeInstance{id: instanceID},
		Random: io.LimitReader(strings.NewReader(strings.Repeat("x", 64)), 3),
		Config: app.Config{LastUsedFlushInterval: time.Minute, LastUsedFinalFlushTimeout: 5 * time.Second},
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if _, err := svc.Tokens().Issue(t.Context(), e.person(t, "sam").ID, nil); err == nil {
		t.Error("Issue with an exhausted random source: no error")
	}
}

func TestRevokeToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, testTTL)
	ctx := t.Context()
	tok := e.issue(t, e.person(t, "alex").ID, nil)
	info, err := e.svc.Tokens().Revoke(ctx, tok.TokenID)
	if err != nil || !info.RevokedAt.Equal(start) || info.ID != tok.TokenID {
		t.Fatalf("Revoke = %+v, %v", info, err)
	}
	e.clock.Advance(time.Hour)
	if info, err = e.svc.Tokens().Revoke(ctx, tok.TokenID); err != nil || !info.RevokedAt.Equal(start) {
		t.Fatalf("second Revoke = %+v, %v; want the first revocation time", info, err)
	}
	if got := e.store.token(tok.TokenID).revokedAt; !got.Equal(start) {
		t.Errorf("revoked_at = %v, want the first revocation %v", got, start)
	}
	events := e.events.appended()
	if len(events) != 1 {
		t.Fatalf("events = %d, want one token.revoked (the second revoke appends none)", len(events))
	}
	ev := events[0]
	if ev.Type != identity.EventTokenRevoked || ev.AudienceID != tok.PrincipalID || ev.ResourceID != tok.PrincipalID ||
		ev.ActorID != instanceID || ev.Payload != (identity.TokenRevokedPayload{PrincipalID: tok.PrincipalID, TokenID: tok.TokenID, RevokedAt: start}) {
		t.Errorf("event = %+v", ev)
	}
	if _, err := e.svc.Tokens().Revoke(ctx, uuid.New()); !errors.Is(err, identity.ErrTokenNotFound) {
		t.Errorf("Revoke unknown: err = %v", err)
	}
}

func TestDevices(t *testing.T) {
	t.Parallel()
	e := newEnv(t, testTTL)
	ctx := t.Context()
	tok := e.issue(t, e.person(t, "sam").ID, &identity.DeviceInput{Name: "phone"})
	devs := e.svc.Devices()

	d, err := devs.Approve(ctx, tok.DeviceID)
	if err != nil || d.Status != identity.DeviceApproved {
		t.Fatalf("Approve = %+v, %v", d, err)
	}
	if d, err = devs.Approve(ctx, tok.DeviceID); err != nil || d.Status != identity.DeviceApproved {
		t.Fatalf("Approve again = %+v, %v", d, err)
	}
	if d, err = devs.Revoke(ctx, tok.DeviceID); err != nil || d.Status != identity.DeviceRevoked {
		t.Fatalf("Revoke = %+v, %v", d, err)
	}
	if _, err = devs.Approve(ctx, tok.DeviceID); !errors.Is(err, identity.ErrDeviceRevoked) || !errors.Is(err, problem.ErrConflict) {
		t.Fatalf("Approve revoked: err = %v, want ErrDeviceRevoked", err)
	}
	if d, err = devs.Get(ctx, tok.DeviceID); err != nil || d.Status != identity.DeviceRevoked {
		t.Errorf("Get = %+v, %v; want revoked", d, err)
	}
	for name, f := range map[string]func(context.Context, uuid.UUID) (identity.Device, error){
		"Get": devs.Get, "Approve": devs.Approve, "Revoke": devs.Revoke,
	} {
		if _, err := f(ctx, uuid.New()); !errors.Is(err, identity.ErrDeviceNotFound) {
			t.Errorf("%s unknown: err = %v, want ErrDeviceNotFound", name, err)
		}
	}
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Hour)
	ctx := t.Context()
	sam := e.person(t, "sam")
	robin := e.person(t, "robin")
	bot, err := e.svc.CreateApp(ctx, identity.AppInput{DisplayName: "Bot", Handle: "bot", Scopes: []string{"messages:read"}})
	if err != nil {
		t.Fatalf("CreateApp: %v", err)
	}
	plain := e.issue(t, sam.ID, nil)
	pending := e.issue(t, sam.ID, &identity.DeviceInput{Name: "phone"})
	approved := e.issue(t, sam.ID, &identity.DeviceInput{Name: "laptop", Status: identity.DeviceApproved})
	revokedDev := e.issue(t, sam.ID, &identity.DeviceInput{Name: "old", Status: identity.DeviceApproved})
	if _, err := e.svc.Devices().Revoke(ctx, revokedDev.DeviceID); err != nil {
		t.Fatalf("revoke device: %v", err)
	}
	revoked := e.issue(t, sam.ID, nil)
	if _, err := e.svc.Tokens().Revoke(ctx, revoked.TokenID); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	appTok := e.issue(t, bot.ID, nil)
	deactivated := e.issue(t, robin.ID, nil)
	e.store.deactivate(robin.ID, start)

	tests := []struct {
		name  string
		token string
		want  actor.Actor
		unath bool
	}{
		{name: "plain", token: plain.Token.Reveal(), want: actor.Actor{PrincipalID: sam.ID, Kind: actor.KindPerson}},
		{name: "pending device", token: pending.Token.Reveal(), want: actor.Actor{PrincipalID: sam.ID, Kind: actor.KindPerson, DeviceID: pending.DeviceID, DevicePending: true}},
		{name: "approved device", token: approved.Token.Reveal(), want: actor.Actor{PrincipalID: sam.ID, Kind: actor.KindPerson, DeviceID: approved.DeviceID}},
		{name: "app", token: appTok.Token.Reveal(), want: actor.Actor{PrincipalID: bot.ID, Kind: actor.KindApp, Scopes: []string{"messages:read"}}},
		{name: "revoked device", token: revokedDev.Token.Reveal(), unath: true},
		{name: "revoked token", token: revoked.Token.Reveal(), unath: true},
		{name: "deactivated principal", token: deactivated.Token.Reveal(), unath: true},
		{name: "unknown", token: "bothy_" + strings.Repeat("A", 43), unath: true},
		{name: "malformed", token: "bothy_short", unath: true},
		{name: "empty", token: "", unath: true},
	}
	for _, tc := range tests {
		got, err := e.svc.Authenticate(ctx, tc.token)
		if tc.unath {
			if err != domain.ErrUnauthenticated { //nolint:errorlint // every refusal must be the very same error value
				t.Errorf("%s: err = %v, want domain.ErrUnauthenticated itself", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got.PrincipalID != tc.want.PrincipalID || got.Kind != tc.want.Kind || got.DeviceID != tc.want.DeviceID ||
			got.DevicePending != tc.want.DevicePending || !slices.Equal(got.Scopes, tc.want.Scopes) {
			t.Errorf("%s: actor = %+v, want %+v", tc.name, got, tc.want)
		}
	}

	lookups := e.store.count("Credential")
	if _, err := e.svc.Authenticate(ctx, "Bearer "+plain.Token.Reveal()); !errors.Is(err, problem.ErrUnauthenticated) {
		t.Errorf("malformed: err = %v", err)
	}
	if n := e.store.count("Credential"); n != lookups {
		t.Error("a malformed token reached the store")
	}

	e.clock.Advance(time.Hour)
	if _, err := e.svc.Authenticate(ctx, plain.Token.Reveal()); !errors.Is(err, problem.ErrUnauthenticated) {
		t.Errorf("expired: err = %v, want unauthenticated", err)
	}

	e.store.fail("Credential", errDB)
	_, err = e.svc.Authenticate(ctx, approved.Token.Reveal())
	if !errors.Is(err, errDB) || errors.Is(err, problem.ErrUnauthenticated) {
		t.Errorf("failing store: err = %v, want the store's error, not a 401", err)
	}
	if strings.Contains(err.Error(), approved.Token.Reveal()) {
		t.Error("the error contains the token")
	}
}

func TestLastUsedIsFlushedInOneWrite(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	ctx := t.Context()
	sam := e.person(t, "sam")
	a, b := e.issue(t, sam.ID, nil), e.issue(t, sam.ID, nil)
	unused := e.issue(t, sam.ID, nil)

	if err := e.svc.Flush(ctx); err != nil || e.store.count("TouchTokens") != 0 {
		t.Fatalf("Flush with nothing recorded: err %v, %d writes; want none", err, e.store.count("TouchTokens"))
	}
	for range 100 {
		for _, tok := range []identity.IssuedToken{a, b} {
			if _, err := e.svc.Authenticate(ctx, tok.Token.Reveal()); err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
		}
		e.clock.Advance(time.Second)
	}
	if n := e.store.count("TouchTokens"); n != 0 {
		t.Fatalf("authenticating wrote %d times, want never", n)
	}
	if err := e.svc.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	last := start.Add(99 * time.Second)
	if n := e.store.count("TouchTokens"); n != 1 {
		t.Fatalf("TouchTokens calls = %d, want 1", n)
	}
	if len(e.store.touches[0]) != 2 {
		t.Errorf("flushed %d uses, want 2 (one per token)", len(e.store.touches[0]))
	}
	for _, tok := range []identity.IssuedToken{a, b} {
		if got := e.store.token(tok.TokenID).lastUsedAt; !got.Equal(last) {
			t.Errorf("last_used_at = %v, want %v", got, last)
		}
	}
	if got := e.store.token(unused.TokenID).lastUsedAt; !got.IsZero() {
		t.Errorf("unused token's last_used_at = %v, want none", got)
	}
	if err := e.svc.Flush(ctx); err != nil || e.store.count("TouchTokens") != 1 {
		t.Errorf("second Flush wrote again: %v", err)
	}
}

func TestFailedFlushIsRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	ctx := t.Context()
	tok := e.issue(t, e.person(t, "alex").ID, nil)
	if _, err := e.svc.Authenticate(ctx, tok.Token.Reveal()); err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	e.store.fail("TouchTokens", errDB)
	if err := e.svc.Flush(ctx); !errors.Is(err, errDB) {
		t.Fatalf("Flush: err = %v, want the store's", err)
	}
	if err := e.svc.Flush(ctx); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if got := e.store.token(tok.TokenID).lastUsedAt; !got.Equal(start) {
		t.Errorf("last_used_at = %v, want %v after the retry", got, start)
	}
}

func TestRunFlushesOnTickAndOnStop(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	e.store.touched = make(chan struct{})
	ticks := make(chan time.Time)
	app.SetTicker(e.svc, ticks)
	alex := e.person(t, "alex")
	first, second := e.issue(t, alex.ID, nil), e.issue(t, alex.ID, nil)

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.svc.Run(ctx) }()

	if _, err := e.svc.Authenticate(t.Context(), first.Token.Reveal()); err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	ticks <- start
	<-e.store.touched
	if got := e.store.token(first.TokenID).lastUsedAt; !got.Equal(start) {
		t.Errorf("after a tick: last_used_at = %v, want %v", got, start)
	}

	e.clock.Advance(time.Minute)
	if _, err := e.svc.Authenticate(t.Context(), second.Token.Reveal()); err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	e.store.fail("TouchTokens", errDB)
	ticks <- start
	<-e.store.touched
	cancel()
	<-e.store.touched
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := e.store.token(second.TokenID).lastUsedAt; !got.Equal(start.Add(time.Minute)) {
		t.Errorf("after stop: last_used_at = %v, want the final flush to write %v", got, start.Add(time.Minute))
	}
	if !strings.Contains(e.log.String(), "flush token last use") {
		t.Errorf("the failed flush was not logged: %s", e.log.String())
	}
}

func TestDeactivateAndReactivate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, testTTL)
	alex, sam, robin := e.person(t, "alex"), e.person(t, "sam"), e.person(t, "robin")
	e.owners.ids = []uuid.UUID{alex.ID, robin.ID}
	ctx := actor.With(t.Context(), actor.Actor{PrincipalID: alex.ID, Kind: actor.KindPerson})
	tok := e.issue(t, sam.ID, nil)

	p, err := e.svc.Deactivate(ctx, sam.ID)
	if err != nil || !p.DeactivatedAt.Equal(start) {
		t.Fatalf("Deactivate = %+v, %v", p, err)
	}
	if _, err := e.svc.Authenticate(ctx, tok.Token.Reveal()); !errors.Is(err, problem.ErrUnauthenticated) {
		t.Errorf("a deactivated principal's token: err = %v, want unauthenticated", err)
	}
	e.clock.Advance(time.Minute)
	if p, err = e.svc.Deactivate(ctx, sam.ID); err != nil || !p.DeactivatedAt.Equal(start) {
		t.Errorf("Deactivate again = %+v, %v; want the first deactivation kept", p, err)
	}
	// robin (an owner) may go while alex stays; then alex is the last active owner.
	if _, err := e.svc.Deactivate(ctx, robin.ID); err != nil {
		t.Fatalf("Deactivate an owner with another active: %v", err)
	}
	if _, err := e.svc.Deactivate(ctx, alex.ID); !errors.Is(err, identity.ErrLastOwner) || !errors.Is(err, problem.ErrConflict) {
		t.Errorf("Deactivate the last active owner: err = %v, want ErrLastOwner", err)
	}
	if _, err := e.svc.Deactivate(ctx, uuid.New()); !errors.Is(err, identity.ErrPrincipalNotFound) {
		t.Errorf("Deactivate unknown: err = %v", err)
	}
	if p, err = e.svc.Reactivate(ctx, sam.ID); err != nil || !p.DeactivatedAt.IsZero() {
		t.Fatalf("Reactivate = %+v, %v", p, err)
	}
	if _, err := e.svc.Authenticate(ctx, tok.Token.Reveal()); err != nil {
		t.Errorf("a reactivated principal's token: %v", err)
	}
	if _, err = e.svc.Reactivate(ctx, sam.ID); err != nil {
		t.Errorf("Reactivate again: %v", err)
	}
	var types []string
	for _, ev := range e.events.appended() {
		if ev.ActorID != alex.ID {
			t.Errorf("event %s actor = %v, want alex (the actor in ctx)", ev.Type, ev.ActorID)
		}
		types = append(types, ev.Type+" "+ev.ResourceID.String())
	}
	want := []string{
		identity.EventPrincipalDeactivated + " " + sam.ID.String(),
		identity.EventPrincipalDeactivated + " " + robin.ID.String(),
		identity.EventPrincipalReactivated + " " + sam.ID.String(),
	}
	if !slices.Equal(types, want) {
		t.Errorf("events = %v, want %v (none for a change that changed nothing)", types, want)
	}
}

func TestListTokensPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, testTTL)
	sam, robin := e.person(t, "sam"), e.person(t, "robin")
	var ids []uuid.UUID
	for range 5 {
		ids = append(ids, e.issue(t, sam.ID, &identity.DeviceInput{Name: "phone"}).TokenID)
	}
	e.issue(t, robin.ID, nil)
	var got []uuid.UUID
	after := uuid.Nil
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("more pages than tokens")
		}
		page, err := e.svc.Tokens().List(t.Context(), sam.ID, after, 2)
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		for _, it := range page.Items {
			if it.DeviceName != "phone" || it.PrincipalID != sam.ID {
				t.Errorf("item = %+v", it)
			}
			got = append(got, it.ID)
		}
		if page.Next == uuid.Nil {
			break
		}
		after = page.Next
	}
	if !slices.Equal(got, ids) {
		t.Errorf("listed %v, want %v in issue order", got, ids)
	}
	page, err := e.svc.Tokens().List(t.Context(), uuid.New(), uuid.Nil, 10)
	if err != nil || page.Items == nil || len(page.Items) != 0 || page.Next != uuid.Nil {
		t.Errorf("List of a principal without tokens = %+v, %v; want an empty page", page, err)
	}
}

// TestActiveRefs: Refs without the deactivated principals (listChannelMembers' names), in one
// query for the distinct ids, none for nothing to look up.
func TestActiveRefs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, testTTL)
	ctx := t.Context()
	alex, sam := e.person(t, "alex"), e.person(t, "sam")
	e.store.mu.Lock()
	gone := e.store.principals[sam.ID]
	gone.DeactivatedAt = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	e.store.principals[sam.ID] = gone
	e.store.mu.Unlock()

	refs, err := e.svc.ActiveRefs(ctx, []uuid.UUID{alex.ID, sam.ID, alex.ID, uuid.Nil})
	if err != nil || len(refs) != 1 || refs[alex.ID] != alex.Ref() {
		t.Fatalf("ActiveRefs = %v, %v; want Alex only", refs, err)
	}
	if n := e.store.count("ActiveRefs"); n != 1 {
		t.Errorf("store ActiveRefs calls = %d, want 1", n)
	}
	if refs, err := e.svc.Refs(ctx, []uuid.UUID{sam.ID}); err != nil || len(refs) != 1 {
		t.Errorf("Refs of the deactivated = %v, %v; want it named still", refs, err)
	}
	e.store.fail("ActiveRefs", errDB)
	if _, err := e.svc.ActiveRefs(ctx, []uuid.UUID{alex.ID}); !errors.Is(err, errDB) {
		t.Errorf("ActiveRefs with a failing store: err = %v, want the store's", err)
	}
}
