package domain_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/internal/ingest/domain"
	"bothy.example.com/server/internal/ingest/ingesttest"
)

// secretFill sets every string and []string field of the struct v points to to text carrying
// every fake secret, and every int to n.
func secretFill(v any, n int) {
	rv := reflect.ValueOf(v).Elem()
	for i := range rv.NumField() {
		f := rv.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(rv.Type().Field(i).Name + ": " + ingesttest.All())
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{ingesttest.All(), "docs " + ingesttest.All()}))
		case reflect.Int:
			f.SetInt(int64(n))
		default:
			panic(fmt.Sprintf("secretFill: field %s of kind %s", rv.Type().Field(i).Name, f.Kind()))
		}
	}
}

// strings of a masked record, for the leak check: every string, every element of every slice.
func allStrings(v any) []string {
	var out []string
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		f := rv.Field(i)
		switch f.Kind() {
		case reflect.String:
			out = append(out, f.String())
		case reflect.Slice:
			for j := range f.Len() {
				if s, ok := f.Index(j).Interface().(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// TestConstructorsMaskEveryField gives every raw field of every record type a value carrying
// every fake secret: nothing of them survives in the masked record or its warnings. The field
// counts make a new raw field fail here until its masking is decided.
func TestConstructorsMaskEveryField(t *testing.T) {
	t.Parallel()
	counts := map[string]int{"RawCommit": 8, "RawIssue": 11, "RawPR": 14}
	for name, n := range counts {
		var typ reflect.Type
		switch name {
		case "RawCommit":
			typ = reflect.TypeFor[domain.RawCommit]()
		case "RawIssue":
			typ = reflect.TypeFor[domain.RawIssue]()
		case "RawPR":
			typ = reflect.TypeFor[domain.RawPR]()
		}
		if typ.NumField() != n {
			t.Errorf("%s has %d fields, this test knows %d: give the new field to its constructor's masking and raise the count", name, typ.NumField(), n)
		}
	}

	var rc domain.RawCommit
	secretFill(&rc, 0)
	rc.SHA = "0123456789abcdef0123456789abcdef01234567"
	c, cw, err := domain.NewCommit(rc, ingesttest.Masker())
	if err != nil {
		t.Fatalf("NewCommit: %v", err)
	}
	var ri domain.RawIssue
	secretFill(&ri, 7)
	is, iw, err := domain.NewIssue(ri, ingesttest.Masker())
	if err != nil {
		t.Fatalf("NewIssue: %v", err)
	}
	var rp domain.RawPR
	secretFill(&rp, 12)
	pr, pw, err := domain.NewPR(rp, ingesttest.Masker())
	if err != nil {
		t.Fatalf("NewPR: %v", err)
	}
	for _, s := range slices.Concat(allStrings(c), cw, allStrings(is), iw, allStrings(pr), pw) {
		if leaks := ingesttest.Leaks(s); len(leaks) > 0 {
			t.Errorf("a masked value holds %v: %q", leaks, s)
		}
	}
	// Every unparsable field is dropped with a warning naming it, never its value.
	wantWarnings := map[string][]string{
		"commit":       {"parents", "author_date", "committer_date"},
		"issue":        {"state", "stateReason", "createdAt", "updatedAt", "closedAt"},
		"pull request": {"state", "createdAt", "updatedAt", "closedAt", "mergedAt", "mergeCommit"},
	}
	for kind, warnings := range map[string][]string{"commit": cw, "issue": iw, "pull request": pw} {
		for _, field := range wantWarnings[kind] {
			if !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, "field "+field+" dropped") }) {
				t.Errorf("%s: no warning drops %s: %q", kind, field, warnings)
			}
		}
		if len(warnings) != len(wantWarnings[kind]) {
			t.Errorf("%s: warnings %q, want one per field of %v", kind, warnings, wantWarnings[kind])
		}
	}
	if !c.AuthoredAt.IsZero() || c.Parents != nil || is.State != "" || is.StateReason != "" || !is.UpdatedAt.IsZero() ||
		pr.State != "" || pr.MergeCommit != "" || !pr.MergedAt.IsZero() {
		t.Errorf("dropped fields kept a value: %+v %+v %+v", c, is, pr)
	}
}

func TestNewCommit(t *testing.T) {
	t.Parallel()
	sha := "0123456789abcdef0123456789abcdef01234567"
	parent := "89abcdef0123456789abcdef0123456789abcdef"
	raw := domain.RawCommit{
		SHA: sha, Parents: parent + " " + parent, AuthoredAt: "2026-01-02T03:04:05+01:00", CommittedAt: "2026-01-02T03:05:00Z",
		AuthorName: " Alex\n", AuthorEmail: "alex@example.com", Subject: "Add the ingester", Body: "\nWhy:\r\nbecause.\n\n",
	}
	c, warnings, err := domain.NewCommit(raw, ingesttest.Masker())
	if err != nil || len(warnings) != 0 {
		t.Fatalf("NewCommit = %v, %v", warnings, err)
	}
	want := domain.Commit{
		SHA: sha, Parents: []string{parent, parent}, AuthoredAt: time.Date(2026, 1, 2, 2, 4, 5, 0, time.UTC),
		CommittedAt: time.Date(2026, 1, 2, 3, 5, 0, 0, time.UTC), Author: "Alex", Email: "alex@example.com",
		Subject: "Add the ingester", Body: "Why:\nbecause.",
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("NewCommit =\n %+v, want\n %+v", c, want)
	}
	if c.Short() != "0123456" {
		t.Errorf("Short = %q", c.Short())
	}
	for _, bad := range []string{"", "0123", strings.ToUpper(sha), sha + "0", "g123456789abcdef0123456789abcdef01234567"} {
		if _, _, err := domain.NewCommit(domain.RawCommit{SHA: bad}, ingesttest.Masker()); !errors.Is(err, domain.ErrUnreadable) || !strings.Contains(err.Error(), "field sha") {
			t.Errorf("NewCommit(sha %q) = %v, want ErrUnreadable naming sha", bad, err)
		}
	}
}

func TestNewIssueAndPRStates(t *testing.T) {
	t.Parallel()
	issueStates := []struct {
		state, reason string
		want          domain.IssueState
		wantReason    string
		warnings      int
	}{
		{"OPEN", "", domain.StateOpen, "", 0},
		{"closed", "NOT_PLANNED", domain.StateClosed, "not_planned", 0},
		{"CLOSED", "completed", domain.StateClosed, "completed", 0},
		{"CLOSED", "DUPLICATE", domain.StateClosed, "duplicate", 0},
		{"OPEN", "REOPENED", domain.StateOpen, "reopened", 0},
		{"MERGED", "", "", "", 1},
		{"", "SPAM", "", "", 1},
	}
	for _, tc := range issueStates {
		is, w, err := domain.NewIssue(domain.RawIssue{Number: 3, State: tc.state, StateReason: tc.reason}, ingesttest.Masker())
		if err != nil || is.State != tc.want || is.StateReason != tc.wantReason || len(w) != tc.warnings {
			t.Errorf("NewIssue(%q, %q) = %q %q %q %v", tc.state, tc.reason, is.State, is.StateReason, w, err)
		}
	}
	for state, want := range map[string]domain.IssueState{"OPEN": domain.StateOpen, "CLOSED": domain.StateClosed, "merged": domain.StateMerged, "": ""} {
		pr, w, err := domain.NewPR(domain.RawPR{Number: 4, State: state, MergeCommit: "0123456789abcdef0123456789abcdef01234567"}, ingesttest.Masker())
		if err != nil || pr.State != want || len(w) != 0 || pr.MergeCommit == "" {
			t.Errorf("NewPR(%q) = %+v %q %v", state, pr, w, err)
		}
	}
	if _, _, err := domain.NewIssue(domain.RawIssue{Number: 0}, ingesttest.Masker()); !errors.Is(err, domain.ErrUnreadable) || !strings.Contains(err.Error(), "field number") {
		t.Errorf("NewIssue without number = %v", err)
	}
	if _, _, err := domain.NewPR(domain.RawPR{Number: -1}, ingesttest.Masker()); !errors.Is(err, domain.ErrUnreadable) || !strings.Contains(err.Error(), "field number") {
		t.Errorf("NewPR without number = %v", err)
	}
	is, _, _ := domain.NewIssue(domain.RawIssue{Number: 5, Labels: []string{" bug ", "", "\n"}, UpdatedAt: "2026-02-03T04:05:06.5Z"}, ingesttest.Masker())
	if !slices.Equal(is.Labels, []string{"bug"}) || !is.UpdatedAt.Equal(time.Date(2026, 2, 3, 4, 5, 6, 5e8, time.UTC)) {
		t.Errorf("NewIssue labels and time = %q %v", is.Labels, is.UpdatedAt)
	}
}
