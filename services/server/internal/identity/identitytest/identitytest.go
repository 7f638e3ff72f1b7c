// Package identitytest changes identity's tables the way an operator does by hand in SQL,
// without the use cases and so without their events, for the tests of other packages (the
// gateway's credential recheck in internal/wire). Identity owns its schema, so the SQL that
// names it lives here, inside the module.
package identitytest

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// RevokeTokenByHand sets the token's revoked_at in SQL: no token.revoked is appended.
func RevokeTokenByHand(ctx context.Context, conn *pgx.Conn, tokenID uuid.UUID) error {
	return exec(ctx, conn, `UPDATE identity.tokens SET revoked_at = now() WHERE id = $1`, tokenID)
}

// DeactivateByHand sets the principal's deactivated_at in SQL: no principal.deactivated
// is appended.
func DeactivateByHand(ctx context.Context, conn *pgx.Conn, principalID uuid.UUID) error {
	return exec(ctx, conn, `UPDATE identity.principals SET deactivated_at = now() WHERE id = $1`, principalID)
}

// RevokeDeviceOfTokenByHand sets the status of the token's device to revoked in SQL.
func RevokeDeviceOfTokenByHand(ctx context.Context, conn *pgx.Conn, tokenID uuid.UUID) error {
	return exec(ctx, conn,
		`UPDATE identity.devices SET status = 'revoked' WHERE id = (SELECT device_id FROM identity.tokens WHERE id = $1)`, tokenID)
}

func exec(ctx context.Context, conn *pgx.Conn, stmt string, id uuid.UUID) error {
	tag, err := conn.Exec(ctx, stmt, id)
	if err != nil {
		return fmt.Errorf("identitytest: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("identitytest: %d rows changed, want 1", tag.RowsAffected())
	}
	return nil
}
