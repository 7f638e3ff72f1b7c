package conditional_test

import (
	"strings"
	"testing"

	"bothy.example.com/server/internal/kernel/conditional"
)

func TestMatches(t *testing.T) {
	const tag = `"abc"`
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{`"abc"`, true},
		{`W/"abc"`, true},
		{`"x", "abc"`, true},
		{`"x",W/"abc"`, true},
		{`*`, true},
		{` * `, true},
		{`"abd"`, false},
		{`abc`, false},
		{`"abc`, false},
		{`"x"y, "abc"`, false},
		{``, false},
	} {
		if got := conditional.Matches(tc.header, tag); got != tc.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", tc.header, tag, got, tc.want)
		}
	}
	if conditional.Matches(`"abc"`, "") {
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
	if len(a) != 24 || !strings.HasPrefix(a, `"`) || !strings.HasSuffix(a, `"`) {
		t.Errorf("tag %s: want 22 base64url characters in quotes", a)
	}
	if a != conditional.Tag([]byte(`{"name":"Support","version":1}`)) {
		t.Errorf("Of is not the tag of the JSON encoding")
	}
	if _, err := conditional.Of(func() {}); err == nil {
		t.Error("a value JSON cannot encode gave a tag")
	}
}
