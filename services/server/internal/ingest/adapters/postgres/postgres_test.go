package postgres_test

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"bothy.example.com/server/internal/ingest"
	ingestpg "bothy.example.com/server/internal/ingest/adapters/postgres"
	"bothy.example.com/server/internal/ingest/domain"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/pgtest"
)

var errBoom = errors.New("boom")

func TestMigrations(t *testing.T) {
	t.Parallel()
	set := ingestpg.Migrations()
	if set.Schema != "ingest" {
		t.Fatalf("schema = %q, want ingest", set.Schema)
	}
	names, err := fs.Glob(set.FS, "*.sql")
	if err != nil || !slices.Equal(names, []string{"0001_create_ingest.sql"}) {
		t.Fatalf("files = %v, %v", names, err)
	}
}

func TestCursors(t *testing.T) {
	t.Parallel()
	runner := tx.NewRunner(pgtest.New(t))
	store := ingestpg.New(runner)
	ctx := t.Context()
	at := time.Date(2026, 3, 4, 5, 6, 7, 891000000, time.FixedZone("x", 3600))
	channel := ids.New()
	if got, err := store.Cursors(ctx, "alex/bothy"); err != nil || len(got) != 0 {
		t.Fatalf("Cursors of a new repository = %v, %v", got, err)
	}
	prs := domain.Cursor{Repository: "alex/bothy", Section: ingest.SectionPRs, ChannelID: channel, Position: "2026-03-04T05:06:07Z", UpdatedAt: at}
	commits := domain.Cursor{Repository: "alex/bothy", Section: ingest.SectionCommits, ChannelID: channel, Position: strings.Repeat("a", 40), UpdatedAt: at}
	other := domain.Cursor{Repository: "sam/tools", Section: ingest.SectionPRs, ChannelID: ids.New(), Position: "x", UpdatedAt: at}
	for _, c := range []domain.Cursor{prs, commits, other} {
		if err := store.SaveCursor(ctx, c); err != nil {
			t.Fatalf("SaveCursor: %v", err)
		}
	}
	// Saving again replaces.
	prs.Position, prs.UpdatedAt = "2026-03-05T00:00:00Z", at.Add(time.Hour)
	if err := store.SaveCursor(ctx, prs); err != nil {
		t.Fatalf("SaveCursor again: %v", err)
	}
	got, err := store.Cursors(ctx, "alex/bothy")
	if err != nil {
		t.Fatalf("Cursors: %v", err)
	}
	prs.UpdatedAt, commits.UpdatedAt = prs.UpdatedAt.UTC(), commits.UpdatedAt.UTC()
	if !slices.Equal(got, []domain.Cursor{commits, prs}) {
		t.Fatalf("Cursors =\n %+v, want\n %+v", got, []domain.Cursor{commits, prs})
	}
	if err := store.SaveCursor(ctx, domain.Cursor{Repository: "alex/bothy", Section: "tags", ChannelID: channel, Position: "x"}); err == nil {
		t.Fatal("SaveCursor of an unknown section succeeded")
	}
	// The table refuses what the register says it must.
	var pgErr *pgconn.PgError
	_, err = runner.DB(ctx).Exec(ctx, "INSERT INTO ingest.cursors VALUES ('alex/bothy', 'tags', $1, 'x', now())", channel)
	if !errors.As(err, &pgErr) || pgErr.Code != "23514" {
		t.Fatalf("a cursor of section tags = %v, want a check violation", err)
	}
}

func TestRecords(t *testing.T) {
	t.Parallel()
	runner := tx.NewRunner(pgtest.New(t))
	store := ingestpg.New(runner)
	ctx := t.Context()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	channel, thread := ids.New(), ids.New()
	rec := func(key string, kind domain.Kind, merge string) domain.Record {
		return domain.Record{Key: key, Kind: kind, Repository: "alex/bothy", ChannelID: channel, ThreadID: thread, MessageID: ids.New(), MergeCommit: merge, CreatedAt: at}
	}
	sha1 := "abc1234" + strings.Repeat("0", 33)
	sha2 := "abc1234" + strings.Repeat("1", 33)
	sha3 := "abd0000" + strings.Repeat("2", 33)
	pr := rec(domain.PRKey("alex/bothy", 1), domain.KindPR, sha3)
	c1, c2, c3 := rec(domain.CommitKey(sha1), domain.KindCommit, ""), rec(domain.CommitKey(sha2), domain.KindCommit, ""), rec(domain.CommitKey(sha3), domain.KindCommit, "")
	branch := rec(domain.BranchKey("alex/bothy", "main"), domain.KindBranch, "")
	if err := store.InsertRecords(ctx, []domain.Record{pr, c1, c2}); err != nil {
		t.Fatalf("InsertRecords: %v", err)
	}
	if err := store.InsertRecords(ctx, nil); err != nil {
		t.Fatalf("InsertRecords of none: %v", err)
	}
	// In a transaction that rolls back, nothing is stored; a key that exists fails the insert.
	err := runner.RunInTx(ctx, func(ctx context.Context) error {
		if err := store.InsertRecords(ctx, []domain.Record{c3, branch}); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("RunInTx = %v", err)
	}
	var pgErr *pgconn.PgError
	if err := store.InsertRecords(ctx, []domain.Record{branch, c1}); !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		t.Fatalf("inserting an existing key = %v, want a unique violation", err)
	}
	if err := store.InsertRecords(ctx, []domain.Record{rec("x", "tag", "")}); err == nil {
		t.Fatal("a record of kind tag was stored")
	}

	got, err := store.Records(ctx, []string{pr.Key, c1.Key, c3.Key, branch.Key, "gh:pr:alex/bothy#9"})
	if err != nil {
		t.Fatalf("Records: %v", err)
	}
	if want := map[string]domain.Record{pr.Key: pr, c1.Key: c1}; !maps.Equal(got, want) {
		t.Fatalf("Records =\n %+v, want\n %+v", got, want)
	}
	if got, err := store.Records(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("Records of none = %v, %v", got, err)
	}

	prefixed, err := store.RecordsWithPrefix(ctx, domain.CommitPrefix("abc1234"), 5)
	if err != nil || !slices.Equal(prefixed, []domain.Record{c1, c2}) {
		t.Fatalf("RecordsWithPrefix = %+v, %v", prefixed, err)
	}
	if limited, err := store.RecordsWithPrefix(ctx, domain.CommitPrefix("abc"), 1); err != nil || len(limited) != 1 {
		t.Fatalf("RecordsWithPrefix limited = %+v, %v", limited, err)
	}
	// LIKE's wildcards in a prefix match themselves only.
	for _, p := range []string{"git:commit:%", "git:commit:abc_234", `git:commit:\`} {
		if found, err := store.RecordsWithPrefix(ctx, p, 5); err != nil || len(found) != 0 {
			t.Fatalf("RecordsWithPrefix(%q) = %+v, %v", p, found, err)
		}
	}

	merged, err := store.MergedPullRequests(ctx, []string{sha1, sha3})
	if err != nil || !maps.Equal(merged, map[string]domain.Record{sha3: pr}) {
		t.Fatalf("MergedPullRequests = %+v, %v", merged, err)
	}
	if merged, err := store.MergedPullRequests(ctx, nil); err != nil || len(merged) != 0 {
		t.Fatalf("MergedPullRequests of none = %+v, %v", merged, err)
	}
	_, err = runner.DB(ctx).Exec(ctx, "UPDATE ingest.records SET merge_commit = 'not-a-sha' WHERE natural_key = $1", pr.Key)
	if !errors.As(err, &pgErr) || pgErr.Code != "23514" {
		t.Fatalf("a merge commit that is no commit id = %v, want a check violation", err)
	}
}

func TestClosedDatabase(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	store := ingestpg.New(tx.NewRunner(pool))
	pool.Close()
	ctx := t.Context()
	checks := map[string]error{}
	_, checks["Cursors"] = store.Cursors(ctx, "x")
	checks["SaveCursor"] = store.SaveCursor(ctx, domain.Cursor{Repository: "x", Section: ingest.SectionPRs, Position: "x"})
	_, checks["Records"] = store.Records(ctx, []string{"x"})
	_, checks["RecordsWithPrefix"] = store.RecordsWithPrefix(ctx, "x", 1)
	_, checks["MergedPullRequests"] = store.MergedPullRequests(ctx, []string{"x"})
	checks["InsertRecords"] = store.InsertRecords(ctx, []domain.Record{{Key: "x", Kind: domain.KindCommit}})
	for name, err := range checks {
		if err == nil || !strings.HasPrefix(err.Error(), "ingest: ") {
			t.Errorf("%s on a closed pool = %v", name, err)
		}
	}
}
