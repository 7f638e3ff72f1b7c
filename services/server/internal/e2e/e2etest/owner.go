package e2etest

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/wire"
)

// Owner is the instance's first owner as Bootstrap created it.
type Owner struct {
	// PrincipalID is the new person's id.
	PrincipalID uuid.UUID
	// Token is the person's first token, seen only here.
	Token identity.Secret
}

// Bootstrap creates the instance's first owner through the App's authz.Owners port, as bothy
// admin bootstrap does; authz.ErrOwnerExists when the instance has one.
func Bootstrap(ctx context.Context, app *wire.App, name, handle, email string) (Owner, error) {
	id, token, err := app.Ports().Owners.Bootstrap(ctx, name, handle, email)
	if err != nil {
		return Owner{}, err //nolint:wrapcheck // the port's own error, as the tests compare it
	}
	return Owner{PrincipalID: id, Token: token}, nil
}

// FlagTarget is the flag target spelled as bothy admin flags spells it (kind:agent,
// principal:<id>), failing the test when it does not parse.
func FlagTarget(t *testing.T, target string) instance.FlagTarget {
	t.Helper()
	ft, err := instance.ParseFlagTarget(target)
	if err != nil {
		t.Fatalf("flag target %q: %v", target, err)
	}
	return ft
}
