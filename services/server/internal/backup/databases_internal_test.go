package backup

import (
	"strings"
	"testing"
)

func TestSibling(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, database, suffix, want string
	}{
		{name: "short", database: "bothy", suffix: "_restoring", want: "bothy_restoring"},
		{name: "shortened to 63 bytes", database: strings.Repeat("b", 60), suffix: "_replaced", want: strings.Repeat("b", 54) + "_replaced"},
		{name: "never inside a character", database: strings.Repeat("é", 30), suffix: "_restoring", want: strings.Repeat("é", 26) + "_restoring"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := (database{name: tc.database}).sibling(tc.suffix); got != tc.want || len(got) > maxName {
				t.Fatalf("sibling = %q (%d bytes), want %q", got, len(got), tc.want)
			}
		})
	}
}

func TestWithDatabase(t *testing.T) {
	t.Parallel()
	got := withDatabase("postgres://alex@127.0.0.1:5432/bothy?sslmode=disable", "bothy_restoring")
	if want := "postgres://alex@127.0.0.1:5432/bothy_restoring?sslmode=disable"; got != want {
		t.Fatalf("withDatabase = %q, want %q", got, want)
	}
}

func TestWithApplicationName(t *testing.T) {
	t.Parallel()
	got := withApplicationName("postgres://alex@127.0.0.1:5432/bothy?options=-c%20search_path%3Dpg_catalog", "bothy-restore-1")
	if want := "postgres://alex@127.0.0.1:5432/bothy?application_name=bothy-restore-1&options=-c%20search_path%3Dpg_catalog"; got != want {
		t.Fatalf("withApplicationName = %q, want %q", got, want)
	}
}
