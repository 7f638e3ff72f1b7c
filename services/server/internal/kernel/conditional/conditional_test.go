package conditional_test

import (
	"regexp"
	"testing"

	"bothy.example.com/server/internal/kernel/conditional"
)

// tagPattern is a strong tag as Tag writes it: 11 base64url characters in quotes.
var tagPattern = regexp.MustCompile(`^"[A-Za-z0-9_-]{11}"$`)

// TestMatches: the If-None-Match rule every conditional read shares (the weak comparison, *,
// lists; anything malformed matches nothing).
func TestMatches(t *testing.T) {
	t.Parallel()
	const tag = `"abc_-1"`
	for _, tc := range []struct {
		name   string
		header string
		want   bool
	}{
		{"empty", "", false},
		{"exact", `"abc_-1"`, true},
		{"weak", `W/"abc_-1"`, true},
		{"in a list", `"x", W/"y" ,"abc_-1"`, true},
		{"in a list without spaces", `"x",W/"abc_-1"`, true},
		{"star", "*", true},
		{"star with space", " * ", true},
		{"other", `"abc_-2"`, false},
		{"unquoted", `abc_-1`, false},
		{"prefix only", `"abc_-"`, false},
		{"unterminated", `"abc_-1`, false},
		{"garbage before", `x"abc_-1"`, false},
		{"a comma inside another tag", `"a,b", "abc_-1"`, true},
		{"lower-case weak prefix", `w/"abc_-1"`, false},
		{"garbage after a tag", `"x"y"abc_-1"`, false},
		{"garbage after a tag in a list", `"x"y, "abc_-1"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := conditional.Matches(tc.header, tag); got != tc.want {
				t.Fatalf("Matches(%q, %q) = %v, want %v", tc.header, tag, got, tc.want)
			}
		})
	}
	if conditional.Matches(`""`, "") || conditional.Matches(`"abc"`, "") {
		t.Error("an empty tag matched")
	}
}

func TestNotModified(t *testing.T) {
	h := `"abc"`
	if conditional.NotModified(nil, h) {
		t.Error("no header matched")
	}
	if !conditional.NotModified(&h, h) {
		t.Error("the same tag did not match")
	}
}

func TestOfChangesWithTheBody(t *testing.T) {
	type body struct {
		Name    string `json:"name"`
		Version int    `json:"version"`
	}
	a, err := conditional.Of(body{"Support", 1})
	if err != nil {
		t.Fatal(err)
	}
	same, _ := conditional.Of(body{"Support", 1})
	other, _ := conditional.Of(body{"Support", 2})
	if a != same {
		t.Errorf("equal bodies: %s and %s", a, same)
	}
	if a == other {
		t.Errorf("different bodies share the tag %s", a)
	}
	if !tagPattern.MatchString(a) {
		t.Errorf("tag %s: want 11 base64url characters in quotes", a)
	}
	if a != conditional.Tag([]byte(`{"name":"Support","version":1}`)) {
		t.Errorf("Of is not the tag of the JSON encoding")
	}
	if _, err := conditional.Of(func() {}); err == nil {
		t.Error("a value JSON cannot encode gave a tag")
	}
}
