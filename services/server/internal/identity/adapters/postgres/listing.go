package postgres

import (
	"context"
	_ "embed" // the directory's query
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/app"
	"bothy.example.com/server/internal/kernel/actor"
)

//go:embed queries/principals_page.sql
var principalsPage string

var _ app.ListingStore = (*Store)(nil)

// PrincipalsPage implements app.ListingStore with one query in the order of the unique
// handle index (queries/principals_page.sql).
func (s *Store) PrincipalsPage(ctx context.Context, prefix, after string, limit int, includeDeactivated bool) ([]identity.Principal, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, principalsPage, prefix, after, limit, includeDeactivated)
	if err != nil {
		return nil, fmt.Errorf("principals page: %w", err)
	}
	var (
		p           identity.Principal
		kind        string
		email       pgtype.Text
		deactivated pgtype.Timestamptz
		out         = make([]identity.Principal, 0, limit)
	)
	_, err = pgx.ForEachRow(rows, []any{&p.ID, &kind, &p.DisplayName, &p.Handle, &email, &p.Scopes, &p.CreatedAt, &deactivated}, func() error {
		q := p
		q.Kind = actor.Kind(kind)
		q.Email = email.String
		q.CreatedAt = p.CreatedAt.UTC()
		q.DeactivatedAt = fromTime(deactivated)
		out = append(out, q)
		p.Scopes = nil
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("principals page: %w", err)
	}
	return out, nil
}
