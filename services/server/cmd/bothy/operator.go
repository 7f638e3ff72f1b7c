package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/wire"
)

// What bothy admin does, in the words of the command: the modules' ports (wire.Ports) behind
// the operator's commands, with inputs as the command line spells them and results shaped for
// its JSON output. An operator at the command line holds the database, so nothing here
// authorizes.

// owner is the first owner bootstrap created.
type owner struct {
	// PrincipalID is the new person's id.
	PrincipalID uuid.UUID
	// Token is the person's first token; it exists only here (the server keeps
	// its hash) and prints as [redacted] (identity.Secret.Reveal reads it).
	Token identity.Secret
}

// bootstrap creates the first owner of the instance: a person with the
// display name, handle and email, an owner grant on the instance and a
// token, in one transaction. authz.ErrOwnerExists when the instance has an owner
// (also one a concurrent bootstrap just created); a problem.ErrValidation
// naming display_name, handle or email for bad input.
func bootstrap(ctx context.Context, p wire.Ports, name, handle, email string) (owner, error) {
	id, token, err := p.Owners.Bootstrap(ctx, name, handle, email)
	if err != nil {
		return owner{}, err
	}
	return owner{PrincipalID: id, Token: token}, nil
}

// bootstrapIfNoOwner is bootstrap for bothy serve --bootstrap-owner: created
// is false, with no error, when the instance has an owner already, which is
// every start after the first.
func bootstrapIfNoOwner(ctx context.Context, p wire.Ports, name, handle, email string) (o owner, created bool, err error) {
	o, err = bootstrap(ctx, p, name, handle, email)
	if errors.Is(err, authz.ErrOwnerExists) {
		return owner{}, false, nil
	}
	if err != nil {
		return owner{}, false, err
	}
	return o, true, nil
}

// issueToken issues a token, bound to no device, for the principal whose id
// is principal (as the command line spells it). A problem.ErrValidation for
// an id that is not a UUID; a problem.ErrNotFound when no principal has it;
// a problem.ErrConflict for a deactivated principal.
func issueToken(ctx context.Context, p wire.Ports, principal string) (identity.IssuedToken, error) {
	id, err := uuid.Parse(principal)
	if err != nil || id == uuid.Nil {
		return identity.IssuedToken{}, problem.Validation(problem.FieldError{Field: "principal", Message: "must be a principal id (a UUID)"})
	}
	issued, err := p.Tokens.Issue(ctx, id, nil)
	if errors.Is(err, problem.ErrNotFound) {
		return identity.IssuedToken{}, problem.New(problem.ErrNotFound, "No principal has the id "+id.String()+".")
	}
	if err != nil {
		return identity.IssuedToken{}, err
	}
	return issued, nil
}

// flagView is a feature flag as bothy admin flags prints it.
type flagView struct {
	// Key names the flag.
	Key string `json:"key"`
	// Description says what the flag switches.
	Description string `json:"description"`
	// DefaultEnabled is the value for every actor no override targets.
	DefaultEnabled bool `json:"default_enabled"`
	// Overrides are the overrides, kind overrides first.
	Overrides []flagOverrideView `json:"overrides"`
	// Version increases with every change of the flag or its overrides.
	Version int64 `json:"version"`
	// CreatedAt and UpdatedAt are when the flag was defined and last changed.
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when the flag or its overrides last changed.
	UpdatedAt time.Time `json:"updated_at"`
}

// flagOverrideView is one override as bothy admin flags prints it.
type flagOverrideView struct {
	// Target is kind:<kind> or principal:<id>, as the command line spells it.
	Target string `json:"target"`
	// Enabled is the flag's value for the target.
	Enabled bool `json:"enabled"`
}

// parseID reads a UUID given on the command line for field; a
// problem.ErrValidation naming it otherwise.
func parseID(field, s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil || id == uuid.Nil {
		return uuid.Nil, problem.Validation(problem.FieldError{Field: field, Message: "must be an id (a UUID)"})
	}
	return id, nil
}

// tokenView is how bothy admin prints a token: never a secret (none is
// stored); members without a value are left out.
type tokenView struct {
	ID           string   `json:"id"`
	PrincipalID  string   `json:"principal_id"`
	DeviceID     string   `json:"device_id,omitempty"`
	DeviceName   string   `json:"device_name,omitempty"`
	DeviceStatus string   `json:"device_status,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
	CreatedAt    string   `json:"created_at"`
	ExpiresAt    string   `json:"expires_at,omitempty"`
	RevokedAt    string   `json:"revoked_at,omitempty"`
	LastUsedAt   string   `json:"last_used_at,omitempty"`
}

func tokenViewOf(t identity.TokenInfo) tokenView {
	v := tokenView{
		ID: t.ID.String(), PrincipalID: t.PrincipalID.String(), DeviceName: t.DeviceName,
		DeviceStatus: string(t.DeviceStatus), Scopes: t.Scopes, CreatedAt: rfc3339(t.CreatedAt),
		ExpiresAt: rfc3339(t.ExpiresAt), RevokedAt: rfc3339(t.RevokedAt), LastUsedAt: rfc3339(t.LastUsedAt),
	}
	if t.DeviceID != uuid.Nil {
		v.DeviceID = t.DeviceID.String()
	}
	return v
}

// principalView is how bothy admin prints a principal.
type principalView struct {
	ID            string `json:"id"`
	Kind          string `json:"kind"`
	Handle        string `json:"handle"`
	DisplayName   string `json:"display_name"`
	DeactivatedAt string `json:"deactivated_at,omitempty"`
}

func principalViewOf(p identity.Principal) principalView {
	return principalView{
		ID: p.ID.String(), Kind: string(p.Kind), Handle: p.Handle, DisplayName: p.DisplayName,
		DeactivatedAt: rfc3339(p.DeactivatedAt),
	}
}

// rfc3339 formats t, or "" for the zero time (the member is left out then).
func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// listTokens lists every token of the principal whose id is principal, revoked
// and expired ones included, in issue order; never a secret. A
// problem.ErrValidation for an id that is not a UUID.
func listTokens(ctx context.Context, p wire.Ports, principal string) ([]tokenView, error) {
	id, err := parseID("principal", principal)
	if err != nil {
		return nil, err
	}
	out := []tokenView{}
	after := uuid.Nil
	for {
		page, err := p.Tokens.List(ctx, id, after, adminTokensPage)
		if err != nil {
			return nil, err
		}
		for _, t := range page.Items {
			out = append(out, tokenViewOf(t))
		}
		if page.Next == uuid.Nil {
			return out, nil
		}
		after = page.Next
	}
}

// adminTokensPage is how many tokens bothy admin token list reads per query.
const adminTokensPage = 500

// revokeToken revokes the token whose id is token and appends token.revoked
// (the instance its actor): its requests answer 401 at once and the gateway
// processes close its connections as their log tails read the event.
// Idempotent. A problem.ErrValidation for an id that is not a UUID; a
// problem.ErrNotFound when no token has it.
func revokeToken(ctx context.Context, p wire.Ports, token string) (tokenView, error) {
	id, err := parseID("token", token)
	if err != nil {
		return tokenView{}, err
	}
	t, err := p.Tokens.Revoke(ctx, id)
	if err != nil {
		return tokenView{}, err
	}
	return tokenViewOf(t), nil
}

// deactivatePrincipal deactivates the principal whose id is principal and
// appends principal.deactivated: its tokens answer 401 and its gateway
// connections close. Idempotent; identity.ErrLastOwner (a
// problem.ErrConflict) for the last active owner.
func deactivatePrincipal(ctx context.Context, p wire.Ports, principal string) (principalView, error) {
	id, err := parseID("principal", principal)
	if err != nil {
		return principalView{}, err
	}
	pr, err := p.Principals.Deactivate(ctx, id)
	if err != nil {
		return principalView{}, err
	}
	return principalViewOf(pr), nil
}

// reactivatePrincipal reactivates the principal whose id is principal and
// appends principal.reactivated. Idempotent.
func reactivatePrincipal(ctx context.Context, p wire.Ports, principal string) (principalView, error) {
	id, err := parseID("principal", principal)
	if err != nil {
		return principalView{}, err
	}
	pr, err := p.Principals.Reactivate(ctx, id)
	if err != nil {
		return principalView{}, err
	}
	return principalViewOf(pr), nil
}

// flagViewOf converts a flag for printing; overrides is [] when there are none.
func flagViewOf(f instance.Flag) flagView {
	v := flagView{
		Key:            f.Key,
		Description:    f.Description,
		DefaultEnabled: f.DefaultEnabled,
		Overrides:      make([]flagOverrideView, 0, len(f.Overrides)),
		Version:        f.Version,
		CreatedAt:      f.CreatedAt,
		UpdatedAt:      f.UpdatedAt,
	}
	for _, o := range f.Overrides {
		v.Overrides = append(v.Overrides, flagOverrideView{Target: o.Target.String(), Enabled: o.Enabled})
	}
	return v
}

// listFlags lists every feature flag with its overrides, ordered by key.
func listFlags(ctx context.Context, p wire.Ports) ([]flagView, error) {
	flags, err := p.Flags.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]flagView, 0, len(flags))
	for _, f := range flags {
		out = append(out, flagViewOf(f))
	}
	return out, nil
}

// defineFlag creates the flag, or changes its description and default, and
// appends flags.updated when something changed. A problem.ErrValidation
// naming key or description for bad input.
func defineFlag(ctx context.Context, p wire.Ports, key, description string, defaultEnabled bool) (flagView, error) {
	f, err := p.Flags.Define(ctx, key, description, defaultEnabled)
	if err != nil {
		return flagView{}, err
	}
	return flagViewOf(f), nil
}

// setFlagOverride sets the flag's value for target (kind:person, kind:agent,
// kind:app or principal:<uuid>). instance.ErrFlagNotFound (a
// problem.ErrNotFound) for an undefined key; a problem.ErrValidation naming
// target for a bad target.
func setFlagOverride(ctx context.Context, p wire.Ports, key, target string, enabled bool) (flagView, error) {
	t, err := instance.ParseFlagTarget(target)
	if err != nil {
		return flagView{}, err
	}
	f, err := p.Flags.SetOverride(ctx, key, t, enabled)
	if err != nil {
		return flagView{}, err
	}
	return flagViewOf(f), nil
}

// clearFlagOverride removes the flag's override for target (none to remove
// is not an error); errors as setFlagOverride.
func clearFlagOverride(ctx context.Context, p wire.Ports, key, target string) (flagView, error) {
	t, err := instance.ParseFlagTarget(target)
	if err != nil {
		return flagView{}, err
	}
	f, err := p.Flags.ClearOverride(ctx, key, t)
	if err != nil {
		return flagView{}, err
	}
	return flagViewOf(f), nil
}

// deleteFlag removes the flag with its overrides. instance.ErrFlagNotFound
// for an undefined key.
func deleteFlag(ctx context.Context, p wire.Ports, key string) error {
	if err := p.Flags.Delete(ctx, key); err != nil {
		return fmt.Errorf("delete flag: %w", err)
	}
	return nil
}
