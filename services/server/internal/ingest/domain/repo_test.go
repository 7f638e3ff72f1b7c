package domain_test

import (
	"testing"

	"bothy.example.com/server/internal/ingest/domain"
	"bothy.example.com/server/internal/ingest/ingesttest"
)

func TestNewRepository(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		raw         domain.RawRepository
		want, want2 string
	}{
		{"https", domain.RawRepository{RemoteURL: "https://example.com/Alex/Bothy.git", Branch: "main"}, "alex/bothy", "main"},
		{"ssh", domain.RawRepository{RemoteURL: "ssh://git@example.com:22/alex/bothy"}, "alex/bothy", "HEAD"},
		{"scp-like", domain.RawRepository{RemoteURL: "git@example.com:alex/bothy.git", Branch: "feature/x"}, "alex/bothy", "feature/x"},
		{"credentials in the url", domain.RawRepository{RemoteURL: ingesttest.Secrets()[10].Value}, "alex/bothy", "HEAD"},
		{"a token as the user", domain.RawRepository{RemoteURL: "https://" + ingesttest.Secrets()[1].Value + "@example.com/sam/tools/"}, "sam/tools", "HEAD"},
		{"a local path", domain.RawRepository{RemoteURL: "/srv/git/bothy.git"}, "git/bothy", "HEAD"},
		{"no remote", domain.RawRepository{TopLevel: "/tmp/work/My Repo!"}, "my-repo", "HEAD"},
		{"nothing usable", domain.RawRepository{TopLevel: "/"}, "repository", "HEAD"},
		{"a remote of odd characters", domain.RawRepository{RemoteURL: "https://example.com/###/???", TopLevel: "/tmp/robin"}, "robin", "HEAD"},
		{"a secret-shaped name", domain.RawRepository{RemoteURL: "https://example.com/" + ingesttest.Secrets()[1].Value, TopLevel: "/tmp/sam"}, "sam", "HEAD"},
		{"a secret-shaped branch", domain.RawRepository{TopLevel: "/x/alex", Branch: "fix-" + ingesttest.Secrets()[1].Value}, "alex", "fix-" + domain.Masked},
	}
	for _, tc := range tests {
		got := domain.NewRepository(tc.raw, ingesttest.Masker())
		if got.Name != tc.want || got.Branch != tc.want2 {
			t.Errorf("%s: NewRepository = %q %q, want %q %q", tc.name, got.Name, got.Branch, tc.want, tc.want2)
		}
	}
	if !domain.NewRepository(domain.RawRepository{HasCommits: true}, ingesttest.Masker()).HasCommits {
		t.Error("HasCommits is lost")
	}
}
