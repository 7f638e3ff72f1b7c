package config_test

import (
	"os"
	"strings"
	"testing"

	"bothy.example.com/server/internal/kernel/config"
)

// docKeys is the register the documentation fixtures describe.
func docKeys() []config.Key {
	r := config.NewRegister()
	r.Define("http.addr", config.KindString, "127.0.0.1:8080", "listen address")
	r.Define("database.url", config.KindString, "", "PostgreSQL URL")
	r.Define("sync.page_size", config.KindInt, "100", "events per catch-up page")
	return r.Registered()
}

func TestCheckDocumentedFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file    string
		want    []string
		wantNot []string
	}{
		{
			file:    "testdata/missing-key.md",
			want:    []string{"config key sync.page_size: not documented"},
			wantNot: []string{"http.addr", "database.url"},
		},
		{
			file:    "testdata/unregistered-row.md",
			want:    []string{"documented key sync.pagesize (line 8): not registered"},
			wantNot: []string{"sync.page_size"},
		},
		{
			file: "testdata/wrong-default.md",
			want: []string{
				`config key sync.page_size: documented default "200", code says "100"`,
				`config key database.url: documented default "postgres://localhost", code says ""`,
				"config key http.addr: documented type int, code says string",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			md, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			err = config.CheckDocumented(docKeys(), md)
			if err == nil {
				t.Fatal("CheckDocumented = nil, want the gate to fail")
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			for _, s := range tt.wantNot {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error %q names %s, which is documented correctly", err, s)
				}
			}
		})
	}
}

func TestCheckDocumentedMalformed(t *testing.T) {
	t.Parallel()
	const head = "| key | type | default | meaning |\n| --- | --- | --- | --- |\n"
	const good = "| `http.addr` | string | `127.0.0.1:8080` | listen address |\n| `database.url` | string | (empty) | PostgreSQL URL |\n"
	tests := []struct {
		name string
		md   string
		want string
	}{
		{"no table", "# Configuration\n\nNothing here.\n", "no table with header"},
		{"header without separator", "| key | type | default | meaning |\n| `http.addr` | string | `x` | y |\n", "no table with header"},
		{"row with no key", head + good + "|  | int | `100` | events per page |\n", `key cell "" is not a key in backticks`},
		{"key without backticks", head + good + "| sync.page_size | int | `100` | events per page |\n", `key cell "sync.page_size" is not a key in backticks`},
		{"three cells", head + good + "| `sync.page_size` | int | `100` |\n", "want 4 cells"},
		{"bare default", head + good + "| `sync.page_size` | int | 100 | events per page |\n", `default cell "100" is neither`},
		{"empty backticks default", head + "| `http.addr` | string | `127.0.0.1:8080` | listen address |\n| `database.url` | string | `` | PostgreSQL URL |\n| `sync.page_size` | int | `100` | events |\n", "default cell \"``\" is neither"},
		{"empty meaning", head + good + "| `sync.page_size` | int | `100` |  |\n", "meaning is empty"},
		{"listed twice", head + good + "| `sync.page_size` | int | `100` | events |\n| `sync.page_size` | int | `100` | events |\n", "sync.page_size: listed twice (lines 5 and 6)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := config.CheckDocumented(docKeys(), []byte(tt.md))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CheckDocumented = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestCheckDocumentedAcceptsSplitTablesAndCRLF(t *testing.T) {
	t.Parallel()
	md := "# Configuration\r\n\r\n| key | type | default | meaning |\r\n| --- | --- | --- | --- |\r\n" +
		"| `http.addr` | string | `127.0.0.1:8080` | listen address of Alex's server |\r\n\r\nMore text.\r\n\r\n" +
		"|Key|Type|Default|Meaning|\r\n|:-|:-:|-:|-|\r\n" +
		"|`database.url`|string|(empty)|PostgreSQL URL|\r\n|`sync.page_size`|int|`100`|events per catch-up page|\r\n"
	if err := config.CheckDocumented(docKeys(), []byte(md)); err != nil {
		t.Fatalf("CheckDocumented = %v", err)
	}
}

func TestMarkdown(t *testing.T) {
	t.Parallel()
	got := string(config.Markdown(docKeys()))
	want := "| key | type | default | meaning |\n" +
		"| --- | --- | --- | --- |\n" +
		"| `database.url` | string | (empty) | PostgreSQL URL |\n" +
		"| `http.addr` | string | `127.0.0.1:8080` | listen address |\n" +
		"| `sync.page_size` | int | `100` | events per catch-up page |\n"
	if got != want {
		t.Fatalf("Markdown =\n%s\nwant\n%s", got, want)
	}
}

func TestMarkdownRoundTrip(t *testing.T) {
	t.Parallel()
	r := config.NewRegister()
	r.Define("http.addr", config.KindString, "127.0.0.1:8080", "listen address")
	r.Define("database.url", config.KindString, "", "PostgreSQL URL; empty means the embedded default under `embedded.dir`")
	r.Define("http.max_body_bytes", config.KindBytes, "0", "largest request body")
	r.Define("sync.catchup_scan_window", config.KindDuration, "1h30m", "scan window")
	r.Define("log.debug_sql", config.KindBool, "false", "log SQL")
	r.Define("demo.owner", config.KindString, "(empty)", "a default that reads like the empty marker")
	for name, keys := range map[string][]config.Key{"test register": r.Registered(), "kernel keys": config.Registered()} {
		if err := config.CheckDocumented(keys, config.Markdown(keys)); err != nil {
			t.Errorf("%s: CheckDocumented(Markdown) = %v", name, err)
		}
	}
}
