package domain_test

import (
	"reflect"
	"testing"

	"bothy.example.com/server/internal/ingest/domain"
)

func TestReferences(t *testing.T) {
	t.Parallel()
	full := "0123456789abcdef0123456789abcdef01234567"
	n := func(x int) domain.Reference { return domain.Reference{Kind: domain.RefNumber, Number: x} }
	rn := func(repo string, x int) domain.Reference {
		return domain.Reference{Kind: domain.RefRepoNumber, Repo: repo, Number: x}
	}
	sha := func(s string) domain.Reference { return domain.Reference{Kind: domain.RefCommit, SHA: s} }
	tests := []struct {
		name string
		text string
		want []domain.Reference
	}{
		{"none", "Fix the build", nil},
		{"number", "Fixes #12.", []domain.Reference{n(12)}},
		{"number at start and in parentheses", "#3 (see #4)", []domain.Reference{n(3), n(4)}},
		{"repo number", "Also alex/bothy#7 and Sam-Org/tools.go#8", []domain.Reference{rn("alex/bothy", 7), rn("sam-org/tools.go", 8)}},
		{"not an html entity", "&#123; and a#1 and x/#2", nil},
		{"not a zero number", "#0 and #012", nil},
		{"full commit", "Reverts " + full + ".", []domain.Reference{sha(full)}},
		{"short commit", "after abc1234, before 9f8e7d6c5", []domain.Reference{sha("abc1234"), sha("9f8e7d6c5")}},
		{"short hex words are no commits", "deadbeef 1234567 cafe", nil},
		{"hex inside a word", "xabc1234 abc1234x", nil},
		{"too short", "abc123", nil},
		{"in order, each once", full + " #2 " + full + " #2 #1", []domain.Reference{sha(full), n(2), n(1)}},
		{"upper case hex is no commit", "ABC1234", nil},
	}
	for _, tc := range tests {
		if got := domain.References(tc.text); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: References(%q) = %+v, want %+v", tc.name, tc.text, got, tc.want)
		}
	}
}

func TestReferenceLabels(t *testing.T) {
	t.Parallel()
	full := "0123456789abcdef0123456789abcdef01234567"
	tests := map[string]domain.Reference{
		"#12":          {Kind: domain.RefNumber, Number: 12},
		"alex/bothy#3": {Kind: domain.RefRepoNumber, Repo: "alex/bothy", Number: 3},
		"0123456789ab": {Kind: domain.RefCommit, SHA: full},
		"abc1234":      {Kind: domain.RefCommit, SHA: "abc1234"},
	}
	for want, ref := range tests {
		if got := ref.Label(); got != want {
			t.Errorf("Label(%+v) = %q, want %q", ref, got, want)
		}
	}
	if !(domain.Reference{Kind: domain.RefCommit, SHA: full}).Full() || (domain.Reference{Kind: domain.RefCommit, SHA: "abc1234"}).Full() {
		t.Error("Full is wrong")
	}
}

func TestMergedPullRequest(t *testing.T) {
	t.Parallel()
	tests := map[string]int{
		"Merge pull request #12 from sam/feature": 12,
		"Merge pull request #0 from sam/feature":  0,
		"Merge branch 'main'":                     0,
		"Fix: Merge pull request #3 from x":       0,
		"Add the ingester (#14)":                  0,
	}
	for subject, want := range tests {
		if got := domain.MergedPullRequest(subject); got != want {
			t.Errorf("MergedPullRequest(%q) = %d, want %d", subject, got, want)
		}
	}
}
