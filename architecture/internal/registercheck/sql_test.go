package registercheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStripSQL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"plain sql kept", "SELECT id FROM chat.messages", "SELECT id FROM chat.messages"},
		{"line comment", "SELECT 1 -- sync.event_log\nFROM x", "SELECT 1 " + strings.Repeat(" ", 17) + "\nFROM x"},
		{"block comment keeps newlines", "a /* sync.x\nchat.y */ b", "a" + strings.Repeat(" ", 10) + "\n" + strings.Repeat(" ", 10) + "b"},
		{"unterminated block comment", "a /* chat.y", "a          "},
		{"string literal", "WHERE a = 'instance.read'", "WHERE a =                "},
		{"doubled quote inside literal", "x = 'it''s chat.y' AND chat.z", "x =                AND chat.z"},
		{"quoted identifier kept", `SELECT "it's" FROM "chat".messages`, `SELECT "it's" FROM "chat".messages`},
		{"unterminated literal", "x = 'chat.y", "x =        "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := stripSQL(tc.in)
			if got != tc.want {
				t.Fatalf("stripSQL(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if len(got) != len(tc.in) {
				t.Fatalf("length changed: %d -> %d", len(tc.in), len(got))
			}
		})
	}
}

func TestSplitName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in            string
		schema, table string
		qualified     bool
	}{
		{"chat.messages", "chat", "messages", true},
		{`"Chat"."Messages"`, "chat", "messages", true},
		{"messages", "", "", false},
		{"%s", "", "", false},
		{"sync.%s", "", "", false},
		{"a.b.c", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			s, tb, q := splitName(tc.in)
			if s != tc.schema || tb != tc.table || q != tc.qualified {
				t.Fatalf("splitName(%q) = %q, %q, %v; want %q, %q, %v", tc.in, s, tb, q, tc.schema, tc.table, tc.qualified)
			}
		})
	}
}

func TestGoSQL(t *testing.T) {
	t.Parallel()
	src := "package p\n" + // 1
		"\n" + // 2
		"import \"database/sql\"\n" + // 3
		"\n" + // 4
		"type row struct {\n" + // 5
		"\tID int `db:\"select\"`\n" + // 6
		"}\n" + // 7
		"\n" + // 8
		"const action = \"instance.read\"\n" + // 9
		"\n" + // 10
		"const q = `\n" + // 11
		"SELECT id\n" + // 12
		"FROM chat.messages`\n" + // 13
		"\n" + // 14
		"var c = \"DELETE \" +\n" + // 15
		"\tname() + \"FROM sync.x\"\n" + // 16
		"\n" + // 17
		"func name() string { return sql.ErrNoRows.Error() + \"UPDATE agents.agents\" }\n" // 18
	dir := t.TempDir()
	file := filepath.Join(dir, "q.go")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	texts, err := goSQL(file)
	if err != nil {
		t.Fatal(err)
	}
	type found struct {
		needle string
		line   int
	}
	wants := []found{{"chat.messages", 13}, {"sync.x", 16}, {"agents.agents", 18}}
	if len(texts) != len(wants) {
		var got []string
		for _, tx := range texts {
			got = append(got, tx.text)
		}
		t.Fatalf("found %d SQL texts %q, want %d", len(texts), got, len(wants))
	}
	for i, w := range wants {
		off := strings.Index(texts[i].text, w.needle)
		if off < 0 {
			t.Fatalf("text %d = %q, want it to contain %q", i, texts[i].text, w.needle)
		}
		if got := texts[i].lineAt(off); got != w.line {
			t.Errorf("%s found on line %d, want %d", w.needle, got, w.line)
		}
		if texts[i].test {
			t.Errorf("text %d marked as test code", i)
		}
	}
}

func TestViolationString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    Violation
		want string
	}{
		{Violation{File: "a/b.sql", Line: 3, Message: "bad"}, "a/b.sql:3: bad"},
		{Violation{File: "a/b", Message: "bad"}, "a/b: bad"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			if got := tc.v.String(); got != tc.want {
				t.Fatalf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}
