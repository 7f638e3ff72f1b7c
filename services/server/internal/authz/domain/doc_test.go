package domain_test

import (
	"os"
	"strings"
	"testing"

	"bothy.example.com/server/internal/authz/domain"
)

// specChapter is the permissions chapter whose policy table must be the table in the code.
const specChapter = "../../../../../docs/spec/04-permissions.md"

// policyTable renders domain.Policy as the chapter's Markdown table.
func policyTable() string {
	var b strings.Builder
	b.WriteString("| action | resource | needs | used by, and why |\n| --- | --- | --- | --- |\n")
	for _, r := range domain.Policy() {
		needs := map[domain.Need]string{
			domain.NeedRead:         "can read it",
			domain.NeedRole:         "role " + string(r.Min) + " or more",
			domain.NeedSelf:         "is the actor",
			domain.NeedGrantManager: "manages some grants",
		}[r.Need]
		b.WriteString("| `" + string(r.Action) + "` | " + string(r.Kind) + " | " + needs + " | " + r.Note + " |\n")
	}
	return b.String()
}

// TestSpecChapterHasThePolicyTable keeps docs/spec/04-permissions.md honest: its policy table
// is exactly the code's. On failure the expected table is printed; paste it into the chapter.
func TestSpecChapterHasThePolicyTable(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(specChapter)
	if err != nil {
		t.Fatalf("read the spec chapter: %v", err)
	}
	want := policyTable()
	if !strings.Contains(string(doc), want) {
		t.Fatalf("%s does not contain the policy table of authz/domain; it must read:\n\n%s", specChapter, want)
	}
}
