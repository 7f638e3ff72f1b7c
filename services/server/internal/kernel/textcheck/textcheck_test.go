package textcheck_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"bothy.example.com/server/internal/kernel/textcheck"
)

func TestString(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"ascii", "hello", ""},
		{"multibyte", "grüße 👋", ""},
		{"replacement character itself", "\uFFFD", ""},
		{"nul", "a\x00b", textcheck.MsgNUL},
		{"invalid byte", "a\xffb", textcheck.MsgInvalidUTF8},
		{"overlong slash", "a\xc0\xafb", textcheck.MsgInvalidUTF8},
		{"encoded high surrogate", "a\xed\xa0\x80b", textcheck.MsgInvalidUTF8},
		{"encoded low surrogate", "\xed\xbf\xbf", textcheck.MsgInvalidUTF8},
		{"truncated sequence", "a\xe2\x82", textcheck.MsgInvalidUTF8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := textcheck.String(c.in); got != c.want {
				t.Fatalf("String(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	cases := []struct {
		name  string
		doc   string
		field string // "" means no fault
		msg   string
	}{
		{"valid object", `{"a":"x","b":[1,true,null,{"c":"\u00e9\ud83d\ude00"}]}`, "", ""},
		{"valid escapes", `{"a":"\"\\\/\b\f\n\r\t"}`, "", ""},
		{"nul escape", `{"content_md":"a\u0000b"}`, "content_md", textcheck.MsgNUL},
		{"raw nul", "{\"content_md\":\"a\x00b\"}", "content_md", textcheck.MsgNUL},
		{"raw invalid byte", "{\"name\":\"a\xffb\"}", "name", textcheck.MsgInvalidUTF8},
		{"overlong", "{\"name\":\"\xc0\xaf\"}", "name", textcheck.MsgInvalidUTF8},
		{"encoded surrogate", "{\"name\":\"\xed\xa0\x80\"}", "name", textcheck.MsgInvalidUTF8},
		{"lone high escape", `{"name":"a\ud800b"}`, "name", textcheck.MsgLoneSurrogate},
		{"lone high escape at end", `{"name":"\ud800"}`, "name", textcheck.MsgLoneSurrogate},
		{"high then non-surrogate escape", `{"name":"\ud800\u0041"}`, "name", textcheck.MsgLoneSurrogate},
		{"lone low escape", `{"name":"\udc00"}`, "name", textcheck.MsgLoneSurrogate},
		{"upper-case hex", `{"name":"\uD800"}`, "name", textcheck.MsgLoneSurrogate},
		{"nested in array", `{"sections":[{"title":"ok"},{"key":"k","title":"\u0000"}]}`, "sections[1].title", textcheck.MsgNUL},
		{"array element", `{"ids":["a","\udfff"]}`, "ids[1]", textcheck.MsgLoneSurrogate},
		{"member name", `{"value":{"a\u0000":1}}`, "value", textcheck.MsgNameNUL},
		{"member name at top", "{\"\xff\":1}", "body", textcheck.MsgNameInvalidUTF8},
		{"member name lone surrogate", `{"\ud800":1}`, "body", textcheck.MsgNameLoneSurrogate},
		{"escaped member name in path", `{"v\u0061lue":{"x":"\u0000"}}`, "value.x", textcheck.MsgNUL},
		{"top-level string", `"\u0000"`, "body", textcheck.MsgNUL},
		{"top-level array", `["\u0000"]`, "[0]", textcheck.MsgNUL},
		{"whitespace everywhere", " { \"a\" : [ \"x\" , \"\\u0000\" ] } ", "a[1]", textcheck.MsgNUL},
		{"syntax error first", `{"a" "\u0000"}`, "", ""},
		{"truncated", `{"a":"\u00`, "", ""},
		{"empty", ``, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, ok := textcheck.JSON([]byte(c.doc))
			if c.field == "" {
				if ok {
					t.Fatalf("JSON(%q) = %+v, want no fault", c.doc, f)
				}
				return
			}
			if !ok || f.Field != c.field || f.Message != c.msg {
				t.Fatalf("JSON(%q) = %+v, %v; want {%s %s}", c.doc, f, ok, c.field, c.msg)
			}
		})
	}
}

func TestJSONDoesNotAllocateOnValidInput(t *testing.T) {
	doc := []byte(`{"content_md":"Hello **Sam**, see the notes from Robin: grüße 👋","sections":[{"key":"k","title":"t","collapsed":false,"channel_ids":[]}]}`)
	allocs := testing.AllocsPerRun(100, func() {
		if _, ok := textcheck.JSON(doc); ok {
			t.Fatal("fault in a valid document")
		}
	})
	if allocs != 0 {
		t.Fatalf("JSON allocates %v times on a valid document, want 0", allocs)
	}
}

// FuzzJSON checks the scanner against encoding/json on arbitrary input: it
// never panics, and a document it passes decodes to strings that are valid
// text (what encoding/json would otherwise have silently replaced).
func FuzzJSON(f *testing.F) {
	for _, seed := range []string{
		`{"content_md":"a\u0000b"}`, `{"a":["\ud800",{"b":"\udc00"}]}`, "{\"a\":\"\xc0\xaf\"}",
		`{"a":"\ud83d\ude00"}`, `[1,2,{"x":null}]`, `"x"`, `{"a":"\\u0000"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		fault, found := textcheck.JSON(doc)
		if found && (fault.Field == "" || fault.Message == "") {
			t.Fatalf("fault without field or message: %+v", fault)
		}
		var v any
		if err := json.Unmarshal(doc, &v); err != nil || found {
			return
		}
		walkStrings(v, func(s string) {
			if strings.ContainsRune(s, 0) {
				t.Fatalf("passed a document decoding to a NUL: %q", doc)
			}
			if strings.ContainsRune(s, utf8.RuneError) && !strings.Contains(string(doc), "\uFFFD") && !strings.Contains(strings.ToLower(string(doc)), `\ufffd`) {
				t.Fatalf("passed a document decoding to U+FFFD it does not contain: %q", doc)
			}
		})
	})
}

func walkStrings(v any, fn func(string)) {
	switch t := v.(type) {
	case string:
		fn(t)
	case []any:
		for _, e := range t {
			walkStrings(e, fn)
		}
	case map[string]any:
		for k, e := range t {
			fn(k)
			walkStrings(e, fn)
		}
	}
}
