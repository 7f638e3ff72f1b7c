package domain_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/sync/domain"
)

var (
	chanA = uuid.MustParse("0193a1c2-7c00-7a01-8000-00000000c0a1")
	chanB = uuid.MustParse("0193a1c2-7c00-7a01-8000-00000000c0b2")
	chanC = uuid.MustParse("0193a1c2-7c00-7a01-8000-00000000c0c3")
)

// fieldErrors returns the fields a validation error names, failing the test for any other error.
func fieldErrors(t *testing.T, err error) []problem.FieldError {
	t.Helper()
	if err == nil {
		return nil
	}
	if !errors.Is(err, problem.ErrValidation) {
		t.Fatalf("err = %v, want a validation error", err)
	}
	return problem.From(t.Context(), err).Errors
}

// fieldNames returns the distinct field names of a validation error in order.
func fieldNames(t *testing.T, err error) []string {
	t.Helper()
	var out []string
	for _, f := range fieldErrors(t, err) {
		if !slices.Contains(out, f.Field) {
			out = append(out, f.Field)
		}
	}
	return out
}

func TestCheckLastReadSeq(t *testing.T) {
	t.Parallel()
	for _, seq := range []int64{0, 1, 1 << 62} {
		if err := domain.CheckLastReadSeq(seq); err != nil {
			t.Errorf("CheckLastReadSeq(%d) = %v, want nil", seq, err)
		}
	}
	for _, seq := range []int64{-1, -1 << 62} {
		if names := fieldNames(t, domain.CheckLastReadSeq(seq)); !slices.Equal(names, []string{domain.FieldLastReadSeq}) {
			t.Errorf("CheckLastReadSeq(%d) names %v, want [%s]", seq, names, domain.FieldLastReadSeq)
		}
	}
}

func TestClampLastReadSeq(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		lastRead    int64
		lastMessage int64
		want        int64
	}{
		{name: "below the newest message", lastRead: 3, lastMessage: 7, want: 3},
		{name: "at the newest message", lastRead: 7, lastMessage: 7, want: 7},
		{name: "beyond the newest message is clamped", lastRead: 12, lastMessage: 7, want: 7},
		{name: "zero marks the thread unread", lastRead: 0, lastMessage: 7, want: 0},
		{name: "empty thread", lastRead: 5, lastMessage: 0, want: 0},
		{name: "never below zero", lastRead: -3, lastMessage: 7, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := domain.ClampLastReadSeq(tc.lastRead, tc.lastMessage); got != tc.want {
				t.Errorf("ClampLastReadSeq(%d, %d) = %d, want %d", tc.lastRead, tc.lastMessage, got, tc.want)
			}
		})
	}
}

func TestCheckDraftContent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		max     int64
		invalid bool
	}{
		{name: "short", content: "Sam, see the notes from Robin", max: 100},
		{name: "exactly the limit", content: strings.Repeat("a", 16), max: 16},
		{name: "multi-byte at the limit", content: strings.Repeat("\u00e9", 8), max: 16},
		{name: "only whitespace is kept", content: "  \n", max: 16},
		{name: "empty", content: "", max: 16, invalid: true},
		{name: "one byte over", content: strings.Repeat("a", 17), max: 16, invalid: true},
		{name: "multi-byte over", content: strings.Repeat("\u00e9", 9), max: 16, invalid: true},
		{name: "invalid UTF-8", content: "caf\xe9", max: 16, invalid: true},
		{name: "NUL", content: "a\x00b", max: 16, invalid: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := domain.CheckDraftContent(tc.content, tc.max)
			names := fieldNames(t, err)
			switch {
			case tc.invalid && !slices.Equal(names, []string{domain.FieldContentMD}):
				t.Errorf("invalid fields = %v, want [%s]", names, domain.FieldContentMD)
			case !tc.invalid && err != nil:
				t.Errorf("CheckDraftContent = %v, want nil", err)
			}
		})
	}
}

func TestCheckSettingKey(t *testing.T) {
	t.Parallel()
	valid := []string{
		"theme", "a", "notifications.desktop", "editor.font-size", "x_1", strings.Repeat("k", 64),
	}
	invalid := []string{
		"", "Theme", "1theme", ".theme", "_theme", "-theme", "the me", "th\u00e9me", "theme/dark",
		strings.Repeat("k", 65), "theme\n",
	}
	for _, key := range valid {
		t.Run("valid "+key, func(t *testing.T) {
			t.Parallel()
			if err := domain.CheckSettingKey(key); err != nil {
				t.Errorf("CheckSettingKey(%q) = %v, want nil", key, err)
			}
		})
	}
	for _, key := range invalid {
		t.Run(fmt.Sprintf("invalid %q", key), func(t *testing.T) {
			t.Parallel()
			names := fieldNames(t, domain.CheckSettingKey(key))
			if !slices.Equal(names, []string{domain.FieldKey}) {
				t.Errorf("CheckSettingKey(%q) names %v, want [%s]", key, names, domain.FieldKey)
			}
		})
	}
}

func TestNormalizeSettingValue(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", domain.MaxSettingDepth) + strings.Repeat("]", domain.MaxSettingDepth)
	tooDeep := "[" + deep + "]"
	tests := []struct {
		name    string
		value   string
		max     int64
		want    string // the normalized value; empty when invalid
		invalid bool
	}{
		{name: "string", value: `"dark"`, max: 100, want: `"dark"`},
		{name: "number", value: `14`, max: 100, want: `14`},
		{name: "fraction keeps its text", value: `1.50`, max: 100, want: `1.50`},
		{name: "big integer keeps its digits", value: `123456789012345678901234567890`, max: 100, want: `123456789012345678901234567890`},
		{name: "bool", value: `false`, max: 100, want: `false`},
		{name: "object is compacted with sorted keys", value: "{ \"size\": 14,\n \"family\": \"mono\" }", max: 100, want: `{"family":"mono","size":14}`},
		{name: "array", value: `[1, "two", {"three": true}]`, max: 100, want: `[1,"two",{"three":true}]`},
		{name: "empty object", value: `{}`, max: 100, want: `{}`},
		{name: "HTML characters stay as they are", value: `"<b>&</b>"`, max: 100, want: `"<b>&</b>"`},
		{name: "lone surrogate becomes the replacement character", value: `"\ud800"`, max: 100, want: "\"\ufffd\""},
		{name: "duplicate keys keep the last", value: `{"a":1,"a":2}`, max: 100, want: `{"a":2}`},
		{name: "limit counts the normalized form", value: `[ 1, 2 ]`, max: 5, want: `[1,2]`},
		{name: "nested at the depth limit", value: deep, max: 1000, want: deep},
		{name: "missing", value: ``, max: 100, invalid: true},
		{name: "only whitespace", value: "  ", max: 100, invalid: true},
		{name: "null", value: `null`, max: 100, invalid: true},
		{name: "null inside an object", value: `{"theme":null}`, max: 100, invalid: true},
		{name: "null inside an array", value: `[1,null]`, max: 100, invalid: true},
		{name: "not JSON", value: `dark`, max: 100, invalid: true},
		{name: "two values", value: `1 2`, max: 100, invalid: true},
		{name: "invalid UTF-8", value: "\"caf\xe9\"", max: 100, invalid: true},
		{name: "NUL in a string", value: `"a\u0000b"`, max: 100, invalid: true},
		{name: "NUL in a key", value: `{"a\u0000":1}`, max: 100, invalid: true},
		{name: "number beyond a double", value: `1e400`, max: 100, invalid: true},
		{name: "too large", value: `"` + strings.Repeat("a", 20) + `"`, max: 21, invalid: true},
		{name: "too deep", value: tooDeep, max: 1000, invalid: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.NormalizeSettingValue(json.RawMessage(tc.value), tc.max)
			if tc.invalid {
				if names := fieldNames(t, err); !slices.Equal(names, []string{domain.FieldValue}) {
					t.Fatalf("invalid fields = %v, want [%s] (err %v)", names, domain.FieldValue, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NormalizeSettingValue(%s) = %v, want nil", tc.value, err)
			}
			if string(got) != tc.want {
				t.Errorf("NormalizeSettingValue(%s) = %s, want %s", tc.value, got, tc.want)
			}
		})
	}
}

func TestNormalizeSetting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		key, value string
		want       string
		wantFields []string
	}{
		{name: "valid", key: "theme", value: ` { "mode" : "dark" } `, want: `{"mode":"dark"}`},
		{name: "bad key", key: "Theme", value: `"dark"`, wantFields: []string{domain.FieldKey}},
		{name: "bad value", key: "theme", value: `null`, wantFields: []string{domain.FieldValue}},
		{name: "both bad", key: "", value: ``, wantFields: []string{domain.FieldKey, domain.FieldValue}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.NormalizeSetting(tc.key, json.RawMessage(tc.value), 100)
			if names := fieldNames(t, err); !slices.Equal(names, tc.wantFields) {
				t.Fatalf("invalid fields = %v, want %v (err %v)", names, tc.wantFields, err)
			}
			if string(got) != tc.want {
				t.Errorf("NormalizeSetting = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestNormalizeSettingValueCopies(t *testing.T) {
	t.Parallel()
	in := json.RawMessage(`"dark"`)
	got, err := domain.NormalizeSettingValue(in, 100)
	if err != nil {
		t.Fatal(err)
	}
	in[1] = 'X'
	if string(got) != `"dark"` {
		t.Errorf("the normalized value shares the input's bytes: %s", got)
	}
}

// testSidebarLimits are the sidebar limits of these tests, small so that the configured values
// (sync.max_sidebar_sections, sync.max_sidebar_channels), not fixed ones, are what is enforced.
var testSidebarLimits = domain.SidebarLimits{Sections: 5, Channels: 8}

func TestNormalizeSidebar(t *testing.T) {
	t.Parallel()
	section := func(key string, channels ...uuid.UUID) domain.SidebarSection {
		return domain.SidebarSection{Key: key, Title: "Support", ChannelIDs: append([]uuid.UUID{}, channels...)}
	}
	many := func(n int) []uuid.UUID {
		out := make([]uuid.UUID, n)
		for i := range out {
			out[i] = uuid.Must(uuid.NewV7())
		}
		return out
	}
	sections := func(n int) []domain.SidebarSection {
		out := make([]domain.SidebarSection, n)
		for i := range out {
			out[i] = section(fmt.Sprintf("s%d", i))
		}
		return out
	}
	perSection := many(testSidebarLimits.Channels / 2)
	tests := []struct {
		name    string
		in      []domain.SidebarSection
		want    []domain.SidebarSection
		invalid bool
	}{
		{name: "nil is an empty sidebar", in: nil, want: []domain.SidebarSection{}},
		{
			name: "kept in order with every field",
			in: []domain.SidebarSection{
				{Key: "fav", Title: "Favourites", Collapsed: true, ChannelIDs: []uuid.UUID{chanB, chanA}},
				{Key: "dm", ChannelIDs: nil},
			},
			want: []domain.SidebarSection{
				{Key: "fav", Title: "Favourites", Collapsed: true, ChannelIDs: []uuid.UUID{chanB, chanA}},
				{Key: "dm", ChannelIDs: []uuid.UUID{}},
			},
		},
		{
			name: "duplicates within a section are dropped, the first place kept",
			in:   []domain.SidebarSection{section("fav", chanA, chanB, chanA, chanC, chanB)},
			want: []domain.SidebarSection{section("fav", chanA, chanB, chanC)},
		},
		{
			name: "the same channel in two sections is kept",
			in:   []domain.SidebarSection{section("a", chanA), section("b", chanA)},
			want: []domain.SidebarSection{section("a", chanA), section("b", chanA)},
		},
		{name: "the most sections", in: sections(testSidebarLimits.Sections), want: sections(testSidebarLimits.Sections)},
		{
			name: "the most channels, counted after dropping duplicates",
			in:   []domain.SidebarSection{section("a", perSection...), section("b", append(perSection, perSection...)...)},
			want: []domain.SidebarSection{section("a", perSection...), section("b", perSection...)},
		},
		{
			name: "title of the most runes",
			in:   []domain.SidebarSection{{Key: "k", Title: strings.Repeat("\u00e9", domain.MaxSectionTitleLen)}},
			want: []domain.SidebarSection{{Key: "k", Title: strings.Repeat("\u00e9", domain.MaxSectionTitleLen), ChannelIDs: []uuid.UUID{}}},
		},
		{
			name: "key of the most runes",
			in:   []domain.SidebarSection{{Key: strings.Repeat("\u00e9", domain.MaxSectionKeyLen)}},
			want: []domain.SidebarSection{{Key: strings.Repeat("\u00e9", domain.MaxSectionKeyLen), ChannelIDs: []uuid.UUID{}}},
		},
		{name: "too many sections", in: sections(testSidebarLimits.Sections + 1), invalid: true},
		{name: "too many channels", in: []domain.SidebarSection{section("a", perSection...), section("b", many(testSidebarLimits.Channels/2+1)...)}, invalid: true},
		{name: "empty key", in: []domain.SidebarSection{section("")}, invalid: true},
		{name: "long key", in: []domain.SidebarSection{section(strings.Repeat("k", domain.MaxSectionKeyLen+1))}, invalid: true},
		{name: "duplicate key", in: []domain.SidebarSection{section("fav"), section("fav")}, invalid: true},
		{name: "control character in a key", in: []domain.SidebarSection{section("f\x00v")}, invalid: true},
		{name: "invalid UTF-8 in a key", in: []domain.SidebarSection{section("f\xffv")}, invalid: true},
		{name: "long title", in: []domain.SidebarSection{{Key: "k", Title: strings.Repeat("t", domain.MaxSectionTitleLen+1)}}, invalid: true},
		{name: "control character in a title", in: []domain.SidebarSection{{Key: "k", Title: "Sup\nport"}}, invalid: true},
		{name: "invalid UTF-8 in a title", in: []domain.SidebarSection{{Key: "k", Title: "Sup\xffport"}}, invalid: true},
		{name: "nil channel id", in: []domain.SidebarSection{section("fav", chanA, uuid.Nil)}, invalid: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.NormalizeSidebar(tc.in, testSidebarLimits)
			if tc.invalid {
				if names := fieldNames(t, err); !slices.Equal(names, []string{domain.FieldSections}) {
					t.Fatalf("invalid fields = %v, want [%s] (err %v)", names, domain.FieldSections, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NormalizeSidebar = %v, want nil", err)
			}
			if !sectionsEqual(got, tc.want) {
				t.Errorf("NormalizeSidebar = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestNormalizeSidebarNamesEveryProblem: a client fixes all of its mistakes from one answer.
func TestNormalizeSidebarNamesEveryProblem(t *testing.T) {
	t.Parallel()
	_, err := domain.NormalizeSidebar([]domain.SidebarSection{
		{Key: ""},
		{Key: "ok"},
		{Key: "ok", Title: strings.Repeat("t", domain.MaxSectionTitleLen+1)},
	}, testSidebarLimits)
	got := fieldErrors(t, err)
	if len(got) != 3 {
		t.Fatalf("errors = %+v, want 3 (empty key, duplicate key, long title)", got)
	}
	for _, f := range got {
		if f.Field != domain.FieldSections {
			t.Errorf("field %q, want %q", f.Field, domain.FieldSections)
		}
	}
	if !strings.Contains(got[0].Message, "section 1") || !strings.Contains(got[1].Message, "section 3") {
		t.Errorf("messages %q, %q do not name the sections (1-based)", got[0].Message, got[1].Message)
	}
}

func TestNormalizeSidebarDoesNotChangeItsInput(t *testing.T) {
	t.Parallel()
	in := []domain.SidebarSection{{Key: "fav", ChannelIDs: []uuid.UUID{chanA, chanA, chanB}}}
	if _, err := domain.NormalizeSidebar(in, testSidebarLimits); err != nil {
		t.Fatal(err)
	}
	if want := []uuid.UUID{chanA, chanA, chanB}; !slices.Equal(in[0].ChannelIDs, want) {
		t.Errorf("input changed to %v", in[0].ChannelIDs)
	}
}

func TestSidebarSectionJSON(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal([]domain.SidebarSection{
		{Key: "fav", Title: "Favourites", Collapsed: true, ChannelIDs: []uuid.UUID{chanA}},
		{Key: "dm", ChannelIDs: []uuid.UUID{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"key":"fav","title":"Favourites","collapsed":true,"channel_ids":["` + chanA.String() + `"]},` +
		`{"key":"dm","title":"","collapsed":false,"channel_ids":[]}]`
	if string(b) != want {
		t.Errorf("JSON = %s\nwant  %s", b, want)
	}
}

func sectionsEqual(a, b []domain.SidebarSection) bool {
	return slices.EqualFunc(a, b, func(x, y domain.SidebarSection) bool {
		return x.Key == y.Key && x.Title == y.Title && x.Collapsed == y.Collapsed &&
			x.ChannelIDs != nil && y.ChannelIDs != nil && slices.Equal(x.ChannelIDs, y.ChannelIDs)
	}) && (a == nil) == (b == nil)
}
