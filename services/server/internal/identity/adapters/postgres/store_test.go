package postgres_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/app"
	"bothy.example.com/server/internal/identity/domain"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/problem"
)

func TestPrincipalsRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	ctx := t.Context()
	alex, err := e.svc.CreatePerson(ctx, identity.PersonInput{DisplayName: "Alex", Handle: "Alex", Email: "alex@example.com"})
	if err != nil {
		t.Fatalf("CreatePerson: %v", err)
	}
	bot, err := e.svc.CreateApp(ctx, identity.AppInput{DisplayName: "Build bot", Handle: "build-bot", Scopes: []string{"messages:write", "events:subscribe"}})
	if err != nil {
		t.Fatalf("CreateApp: %v", err)
	}
	robin, err := e.svc.CreateAgentPrincipal(ctx, identity.AgentInput{DisplayName: "Robin", Handle: "robin"})
	if err != nil {
		t.Fatalf("CreateAgentPrincipal: %v", err)
	}
	for _, want := range []identity.Principal{alex, bot, robin} {
		got, err := e.svc.Get(ctx, want.ID)
		if err != nil {
			t.Fatalf("Get %s: %v", want.Handle, err)
		}
		if got.ID != want.ID || got.Kind != want.Kind || got.DisplayName != want.DisplayName || got.Handle != want.Handle ||
			got.Email != want.Email || !slices.Equal(got.Scopes, want.Scopes) || !got.CreatedAt.Equal(start) ||
			!got.DeactivatedAt.IsZero() || got.CreatedAt.Location() != time.UTC {
			t.Errorf("Get = %+v, want %+v", got, want)
		}
	}
	if alex.Handle != "alex" {
		t.Errorf("handle = %q, want it stored in lower case", alex.Handle)
	}
	if _, err := e.svc.Get(ctx, uuid.New()); !errors.Is(err, identity.ErrPrincipalNotFound) {
		t.Errorf("Get unknown: err = %v", err)
	}

	refs, err := e.svc.Refs(ctx, []uuid.UUID{alex.ID, robin.ID, bot.ID, uuid.New(), alex.ID})
	if err != nil {
		t.Fatalf("Refs: %v", err)
	}
	want := map[uuid.UUID]identity.PrincipalRef{alex.ID: alex.Ref(), robin.ID: robin.Ref(), bot.ID: bot.Ref()}
	if len(refs) != len(want) {
		t.Fatalf("Refs = %v, want %v", refs, want)
	}
	for id, r := range want {
		if refs[id] != r {
			t.Errorf("Refs[%s] = %+v, want %+v", id, refs[id], r)
		}
	}
	if ref, err := e.svc.Ref(ctx, robin.ID); err != nil || ref != robin.Ref() {
		t.Errorf("Ref = %+v, %v", ref, err)
	}
}

func TestByHandlesNamesActivePrincipalsInOneQuery(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	ctx := t.Context()
	alex, sam, robin := e.person(t, "alex"), e.person(t, "sam"), e.person(t, "robin")
	if _, err := e.pool.Exec(ctx, `UPDATE identity.principals SET deactivated_at = $2 WHERE id = $1`, robin.ID, start); err != nil {
		t.Fatalf("deactivate: %v", err)
	}
	refs, err := e.svc.ByHandles(ctx, []string{"Alex", "sam", "robin", "nobody", "sam"})
	if err != nil {
		t.Fatalf("ByHandles: %v", err)
	}
	want := map[string]identity.PrincipalRef{"alex": alex.Ref(), "sam": sam.Ref()}
	if len(refs) != len(want) || refs["alex"] != want["alex"] || refs["sam"] != want["sam"] {
		t.Fatalf("ByHandles = %v, want %v (robin is deactivated)", refs, want)
	}
	got, err := e.store.ActiveByHandles(ctx, nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("ActiveByHandles(nil) = %v, %v; want nothing", got, err)
	}
}

func TestHandlesAreUniqueCaseInsensitively(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	ctx := t.Context()
	e.person(t, "sam")
	tests := []struct {
		name   string
		create func() error
	}{
		{"person in upper case", func() error {
			_, err := e.svc.CreatePerson(ctx, identity.PersonInput{DisplayName: "Sam", Handle: "SAM", Email: "sam2@example.com"})
			return err
		}},
		{"app", func() error {
			_, err := e.svc.CreateApp(ctx, identity.AppInput{DisplayName: "Sam", Handle: "Sam", Scopes: []string{"agents:read"}})
			return err
		}},
		{"agent", func() error {
			_, err := e.svc.CreateAgentPrincipal(ctx, identity.AgentInput{DisplayName: "Sam", Handle: "sAm"})
			return err
		}},
	}
	for _, tc := range tests {
		if err := tc.create(); !errors.Is(err, identity.ErrHandleTaken) || !errors.Is(err, problem.ErrConflict) {
			t.Errorf("%s: err = %v, want ErrHandleTaken", tc.name, err)
		}
	}
}

func TestConcurrentCreationsOfOneHandle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = e.svc.CreatePerson(t.Context(), identity.PersonInput{
				DisplayName: "Robin", Handle: "robin", Email: fmt.Sprintf("robin%d@example.com", i),
			})
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, identity.ErrHandleTaken):
			t.Errorf("err = %v, want nil or ErrHandleTaken", err)
		}
	}
	if won != 1 {
		t.Errorf("%d creations of one handle succeeded, want 1", won)
	}
}

func TestSchemaRefusesWhatTheDomainRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	ctx := t.Context()
	base := identity.Principal{ID: uuid.New(), Kind: actor.KindPerson, DisplayName: "Sam", Handle: "sam", Email: "sam@example.com", CreatedAt: start}
	tests := []struct {
		name   string
		change func(*identity.Principal)
	}{
		{"upper-case handle", func(p *identity.Principal) { p.Handle = "Sam" }},
		{"non-ascii handle", func(p *identity.Principal) { p.Handle = "s\u00e9m" }},
		{"one-letter handle", func(p *identity.Principal) { p.Handle = "s" }},
		{"person without email", func(p *identity.Principal) { p.Email = "" }},
		{"agent with email", func(p *identity.Principal) { p.Kind = actor.KindAgent }},
		{"app without scopes", func(p *identity.Principal) { p.Kind, p.Email = actor.KindApp, "" }},
		{"person with scopes", func(p *identity.Principal) { p.Scopes = []string{"agents:read"} }},
		{"unknown kind", func(p *identity.Principal) { p.Kind = "robot" }},
	}
	for _, tc := range tests {
		p := base
		tc.change(&p)
		err := e.store.InsertPrincipal(ctx, p)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23514" {
			t.Errorf("%s: err = %v, want a check violation", tc.name, err)
		}
	}
}

func TestIssueStoresOnlyTheHash(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)
	ctx := t.Context()
	bot, err := e.svc.CreateApp(ctx, identity.AppInput{DisplayName: "Bot", Handle: "bot", Scopes: []string{"messages:read", "agents:read"}})
	if err != nil {
		t.Fatalf("CreateApp: %v", err)
	}
	tok := e.issue(t, bot, &identity.DeviceInput{Name: "ci runner", Status: identity.DeviceApproved})

	var (
		hash     []byte
		scopes   []string
		expires  time.Time
		deviceID uuid.UUID
		row      string
	)
	err = e.pool.QueryRow(ctx, `SELECT token_hash, scopes, expires_at, device_id, t::text FROM identity.tokens t WHERE id = $1`, tok.TokenID).
		Scan(&hash, &scopes, &expires, &deviceID, &row)
	if err != nil {
		t.Fatalf("read token row: %v", err)
	}
	sum := sha256.Sum256([]byte(tok.Token.Reveal()))
	if !slices.Equal(hash, sum[:]) {
		t.Errorf("token_hash = %x, want the SHA-256 of the secret", hash)
	}
	secretPart := strings.TrimPrefix(tok.Token.Reveal(), domain.TokenPrefix)
	if strings.Contains(row, secretPart) {
		t.Errorf("the token row holds the secret: %s", row)
	}
	if !slices.Equal(scopes, []string{"agents:read", "messages:read"}) || !expires.Equal(start.Add(24*time.Hour)) || deviceID != tok.DeviceID {
		t.Errorf("row: scopes %v, expires %v, device %s", scopes, expires, deviceID)
	}
	dev, err := e.svc.Devices().Get(ctx, tok.DeviceID)
	if err != nil || dev.Status != identity.DeviceApproved || dev.PrincipalID != bot.ID || dev.Name != "ci runner" || !dev.CreatedAt.Equal(start) {
		t.Errorf("device = %+v, %v", dev, err)
	}
}

func TestTokenDeviceBelongsToItsPrincipal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	ctx := t.Context()
	sam, alex := e.person(t, "sam"), e.person(t, "alex")
	samTok := e.issue(t, sam, &identity.DeviceInput{Name: "phone"})
	err := e.store.InsertToken(ctx, domain.Token{
		ID: uuid.New(), PrincipalID: alex.ID, DeviceID: samTok.DeviceID, Hash: domain.HashToken("x"), CreatedAt: start,
	})
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23503" {
		t.Errorf("a token of Alex on Sam's device: err = %v, want a foreign key violation", err)
	}
}

func TestIssueJoinsTheCallersTransaction(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	ctx := t.Context()
	errRollback := errors.New("roll back")
	var tok identity.IssuedToken
	err := e.runner.RunInTx(ctx, func(ctx context.Context) error {
		p, err := e.svc.CreatePerson(ctx, identity.PersonInput{DisplayName: "Alex", Handle: "alex", Email: "alex@example.com"})
		if err != nil {
			return err
		}
		if tok, err = e.svc.Tokens().Issue(ctx, p.ID, &identity.DeviceInput{Name: "laptop"}); err != nil {
			return err
		}
		if _, err := e.svc.Authenticate(ctx, tok.Token.Reveal()); err != nil {
			return fmt.Errorf("inside the transaction: %w", err)
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatalf("RunInTx: %v", err)
	}
	if _, err := e.svc.Authenticate(ctx, tok.Token.Reveal()); !errors.Is(err, problem.ErrUnauthenticated) {
		t.Errorf("a token of a rolled-back transaction: err = %v, want unauthenticated", err)
	}
	e.person(t, "alex") // the handle is free again
}

func TestAuthenticateAgainstTheDatabase(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Hour)
	ctx := t.Context()
	sam := e.person(t, "sam")
	robin := e.person(t, "robin")
	bot, err := e.svc.CreateApp(ctx, identity.AppInput{DisplayName: "Bot", Handle: "bot", Scopes: []string{"events:subscribe"}})
	if err != nil {
		t.Fatalf("CreateApp: %v", err)
	}
	plain := e.issue(t, sam, nil)
	pending := e.issue(t, sam, &identity.DeviceInput{Name: "phone"})
	approved := e.issue(t, sam, &identity.DeviceInput{Name: "laptop", Status: identity.DeviceApproved})
	revokedDevice := e.issue(t, sam, &identity.DeviceInput{Name: "old laptop", Status: identity.DeviceApproved})
	revokedToken := e.issue(t, sam, nil)
	appToken := e.issue(t, bot, nil)
	deactivated := e.issue(t, robin, nil)
	if _, err := e.svc.Devices().Revoke(ctx, revokedDevice.DeviceID); err != nil {
		t.Fatalf("revoke device: %v", err)
	}
	if _, err := e.svc.Tokens().Revoke(ctx, revokedToken.TokenID); err != nil {
		t.Fatalf("revoke token: %v", err)
	}
	if _, err := e.pool.Exec(ctx, `UPDATE identity.principals SET deactivated_at = $2 WHERE id = $1`, robin.ID, start); err != nil {
		t.Fatalf("deactivate: %v", err)
	}

	tests := []struct {
		name  string
		token string
		want  actor.Actor
		unath bool
	}{
		{name: "plain", token: plain.Token.Reveal(), want: actor.Actor{PrincipalID: sam.ID, Kind: actor.KindPerson}},
		{name: "pending device", token: pending.Token.Reveal(), want: actor.Actor{PrincipalID: sam.ID, Kind: actor.KindPerson, DeviceID: pending.DeviceID, DevicePending: true}},
		{name: "approved device", token: approved.Token.Reveal(), want: actor.Actor{PrincipalID: sam.ID, Kind: actor.KindPerson, DeviceID: approved.DeviceID}},
		{name: "app", token: appToken.Token.Reveal(), want: actor.Actor{PrincipalID: bot.ID, Kind: actor.KindApp, Scopes: []string{"events:subscribe"}}},
		{name: "revoked device", token: revokedDevice.Token.Reveal(), unath: true},
		{name: "revoked token", token: revokedToken.Token.Reveal(), unath: true},
		{name: "deactivated principal", token: deactivated.Token.Reveal(), unath: true},
		{name: "unknown", token: domain.TokenPrefix + strings.Repeat("Q", 43), unath: true},
	}
	for _, tc := range tests {
		got, err := e.svc.Authenticate(ctx, tc.token)
		if tc.unath {
			if !errors.Is(err, problem.ErrUnauthenticated) {
				t.Errorf("%s: err = %v, want unauthenticated", tc.name, err)
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

	if _, err := e.svc.Devices().Approve(ctx, pending.DeviceID); err != nil {
		t.Fatalf("approve: %v", err)
	}
	if a, err := e.svc.Authenticate(ctx, pending.Token.Reveal()); err != nil || a.DevicePending {
		t.Errorf("after approval: actor %+v, err %v; want a device no longer pending", a, err)
	}
	if _, err := e.svc.Devices().Approve(ctx, revokedDevice.DeviceID); !errors.Is(err, identity.ErrDeviceRevoked) {
		t.Errorf("approve a revoked device: err = %v", err)
	}
	if _, err := e.svc.Devices().Approve(ctx, uuid.New()); !errors.Is(err, identity.ErrDeviceNotFound) {
		t.Errorf("approve an unknown device: err = %v", err)
	}
	if _, err := e.svc.Tokens().Revoke(ctx, uuid.New()); !errors.Is(err, identity.ErrTokenNotFound) {
		t.Errorf("revoke an unknown token: err = %v", err)
	}

	e.clock.Advance(time.Hour)
	if _, err := e.svc.Authenticate(ctx, plain.Token.Reveal()); !errors.Is(err, problem.ErrUnauthenticated) {
		t.Errorf("expired: err = %v, want unauthenticated", err)
	}
}

func TestRevokeKeepsTheFirstTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	ctx := t.Context()
	tok := e.issue(t, e.person(t, "alex"), nil)
	for range 2 {
		if _, err := e.svc.Tokens().Revoke(ctx, tok.TokenID); err != nil {
			t.Fatalf("Revoke: %v", err)
		}
		e.clock.Advance(time.Hour)
	}
	var revoked time.Time
	if err := e.pool.QueryRow(ctx, `SELECT revoked_at FROM identity.tokens WHERE id = $1`, tok.TokenID).Scan(&revoked); err != nil {
		t.Fatalf("read: %v", err)
	}
	if !revoked.Equal(start) {
		t.Errorf("revoked_at = %v, want %v", revoked, start)
	}
}

func TestFlushWritesLastUseInOneStatement(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	ctx := t.Context()
	alex := e.person(t, "alex")
	a, b, unused := e.issue(t, alex, nil), e.issue(t, alex, nil), e.issue(t, alex, nil)
	for range 3 {
		for _, tok := range []identity.IssuedToken{a, b} {
			if _, err := e.svc.Authenticate(ctx, tok.Token.Reveal()); err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
		}
		e.clock.Advance(time.Second)
	}
	if got := lastUsed(t, e, a.TokenID); !got.IsZero() {
		t.Fatalf("last_used_at = %v before a flush, want none: authenticating must not write", got)
	}
	if err := e.svc.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	want := start.Add(2 * time.Second)
	for _, id := range []uuid.UUID{a.TokenID, b.TokenID} {
		if got := lastUsed(t, e, id); !got.Equal(want) {
			t.Errorf("last_used_at = %v, want %v", got, want)
		}
	}
	if got := lastUsed(t, e, unused.TokenID); !got.IsZero() {
		t.Errorf("unused token: last_used_at = %v", got)
	}

	// An older use (another process flushing late) and an unknown token change nothing.
	err := e.store.TouchTokens(ctx, []app.TokenUse{{TokenID: a.TokenID, At: start}, {TokenID: uuid.New(), At: start}})
	if err != nil {
		t.Fatalf("TouchTokens: %v", err)
	}
	if got := lastUsed(t, e, a.TokenID); !got.Equal(want) {
		t.Errorf("an older use moved last_used_at back to %v", got)
	}
}

func lastUsed(t *testing.T, e env, id uuid.UUID) time.Time {
	t.Helper()
	var at *time.Time
	if err := e.pool.QueryRow(t.Context(), `SELECT last_used_at FROM identity.tokens WHERE id = $1`, id).Scan(&at); err != nil {
		t.Fatalf("read last_used_at: %v", err)
	}
	if at == nil {
		return time.Time{}
	}
	return *at
}

func TestConcurrentDeviceChangesSerialize(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	ctx := t.Context()
	tok := e.issue(t, e.person(t, "sam"), &identity.DeviceInput{Name: "phone"})
	var wg sync.WaitGroup
	var approveErr, revokeErr error
	wg.Go(func() { _, approveErr = e.svc.Devices().Approve(ctx, tok.DeviceID) })
	wg.Go(func() { _, revokeErr = e.svc.Devices().Revoke(ctx, tok.DeviceID) })
	wg.Wait()
	if revokeErr != nil {
		t.Fatalf("Revoke: %v", revokeErr)
	}
	if approveErr != nil && !errors.Is(approveErr, identity.ErrDeviceRevoked) {
		t.Fatalf("Approve: %v", approveErr)
	}
	d, err := e.svc.Devices().Get(ctx, tok.DeviceID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	// Either order ends revoked: an approval after the revocation is refused.
	if d.Status != identity.DeviceRevoked {
		t.Errorf("status = %s, want revoked", d.Status)
	}
}

// TestTokenListAndDeactivationAgainstTheDatabase: the queries of listTokens (device name and
// status, the last use, paging by id), of the revoke that reports whether it changed
// anything, of deactivation and reactivation, and of the owners' lock.
func TestTokenListAndDeactivationAgainstTheDatabase(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Hour)
	ctx := t.Context()
	sam, robin := e.person(t, "sam"), e.person(t, "robin")
	phone := e.issue(t, sam, &identity.DeviceInput{Name: "Sam's phone", Status: identity.DeviceApproved})
	plain := e.issue(t, sam, nil)
	e.issue(t, robin, nil)
	if _, err := e.svc.Authenticate(ctx, phone.Token.Reveal()); err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	if err := e.svc.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}

	first, err := e.store.Tokens(ctx, sam.ID, uuid.Nil, 1)
	if err != nil || len(first) != 1 || first[0].ID != phone.TokenID {
		t.Fatalf("first page = %+v, %v; want the phone's token", first, err)
	}
	p := first[0]
	if p.DeviceID != phone.DeviceID || p.DeviceName != "Sam's phone" || p.DeviceStatus != identity.DeviceApproved ||
		!p.LastUsedAt.Equal(start) || !p.ExpiresAt.Equal(start.Add(time.Hour)) || !p.RevokedAt.IsZero() || !p.CreatedAt.Equal(start) {
		t.Errorf("phone token = %+v", p)
	}
	rest, err := e.store.Tokens(ctx, sam.ID, phone.TokenID, 10)
	if err != nil || len(rest) != 1 || rest[0].ID != plain.TokenID || rest[0].DeviceID != uuid.Nil || rest[0].DeviceName != "" {
		t.Fatalf("after the phone's = %+v, %v; want the plain token alone", rest, err)
	}

	for i, want := range []bool{true, false} {
		revoked, err := e.store.RevokeToken(ctx, plain.TokenID, start.Add(time.Duration(i)*time.Minute))
		if err != nil || revoked != want {
			t.Errorf("RevokeToken %d = %v, %v; want %v", i, revoked, err, want)
		}
	}
	if info, err := e.store.TokenInfo(ctx, plain.TokenID); err != nil || !info.RevokedAt.Equal(start) {
		t.Errorf("TokenInfo = %+v, %v; want the first revocation time", info, err)
	}
	if _, err := e.store.RevokeToken(ctx, uuid.New(), start); !errors.Is(err, identity.ErrTokenNotFound) {
		t.Errorf("RevokeToken unknown: %v", err)
	}
	if _, err := e.store.TokenInfo(ctx, uuid.New()); !errors.Is(err, identity.ErrTokenNotFound) {
		t.Errorf("TokenInfo unknown: %v", err)
	}

	for i, step := range []struct {
		at      time.Time
		changed bool
	}{{start, true}, {start.Add(time.Minute), false}, {time.Time{}, true}, {time.Time{}, false}} {
		changed, err := e.store.SetDeactivatedAt(ctx, sam.ID, step.at)
		if err != nil || changed != step.changed {
			t.Errorf("SetDeactivatedAt step %d = %v, %v; want %v", i, changed, err, step.changed)
		}
	}
	if _, err := e.store.SetDeactivatedAt(ctx, uuid.New(), start); !errors.Is(err, identity.ErrPrincipalNotFound) {
		t.Errorf("SetDeactivatedAt unknown: %v", err)
	}
	err = e.runner.RunInTx(ctx, func(ctx context.Context) error {
		locked, err := e.store.LockPrincipals(ctx, []uuid.UUID{robin.ID, sam.ID, uuid.New()})
		if err != nil {
			return err
		}
		if len(locked) != 2 || bytes.Compare(locked[0].ID[:], locked[1].ID[:]) >= 0 {
			t.Errorf("LockPrincipals = %+v, want both in id order", locked)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("LockPrincipals: %v", err)
	}
}

// TestEndedRechecksManyTokensInOneQuery: identity's batched recheck (the gateway's, every
// gateway.credential_recheck_interval) reads the tokens by id in one query and names each
// that no longer authenticates with why, changes made by hand in SQL included; a token that
// still authenticates (a pending device's too) is absent, an unknown id is revoked.
func TestEndedRechecksManyTokensInOneQuery(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Hour)
	ctx := t.Context()
	sam, robin := e.person(t, "sam"), e.person(t, "robin")
	plain := e.issue(t, sam, nil)
	pending := e.issue(t, sam, &identity.DeviceInput{Name: "phone"})
	byHand := e.issue(t, sam, nil)
	device := e.issue(t, sam, &identity.DeviceInput{Name: "old laptop", Status: identity.DeviceApproved})
	deactivated := e.issue(t, robin, nil)
	expiring := e.issue(t, sam, nil)
	for _, stmt := range []struct {
		sql string
		id  uuid.UUID
	}{
		{`UPDATE identity.tokens SET revoked_at = now() WHERE id = $1`, byHand.TokenID},
		{`UPDATE identity.devices SET status = 'revoked' WHERE id = $1`, device.DeviceID},
		{`UPDATE identity.principals SET deactivated_at = now() WHERE id = $1`, robin.ID},
		{`UPDATE identity.tokens SET expires_at = created_at + interval '1 millisecond' WHERE id = $1`, expiring.TokenID},
	} {
		if _, err := e.pool.Exec(ctx, stmt.sql, stmt.id); err != nil {
			t.Fatalf("%s: %v", stmt.sql, err)
		}
	}
	e.clock.Advance(time.Second) // past the shortened expiry, well before identity.token_ttl
	unknown := uuid.New()
	got, err := e.svc.Ended(ctx, []uuid.UUID{plain.TokenID, pending.TokenID, byHand.TokenID, device.TokenID, deactivated.TokenID, expiring.TokenID, unknown})
	if err != nil {
		t.Fatalf("Ended: %v", err)
	}
	want := map[uuid.UUID]identity.CredentialEnd{
		byHand.TokenID:      identity.CredentialRevoked,
		device.TokenID:      identity.CredentialDeviceRevoked,
		deactivated.TokenID: identity.CredentialDeactivated,
		expiring.TokenID:    identity.CredentialExpired,
		unknown:             identity.CredentialRevoked,
	}
	if !maps.Equal(got, want) {
		t.Errorf("Ended = %v, want %v", got, want)
	}
	if got, err := e.svc.Ended(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("Ended(nil) = %v, %v; want nothing", got, err)
	}
}
