package config_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

// testKeys is a fresh register with one key of every kind.
type testKeys struct {
	reg     *config.Register
	addr    config.Key
	url     config.Key
	page    config.Key
	body    config.Key
	timeout config.Key
	debug   config.Key
}

func newTestKeys() testKeys {
	r := config.NewRegister()
	return testKeys{
		reg:     r,
		addr:    r.Define("http.addr", config.KindString, "127.0.0.1:8080", "listen address"),
		url:     r.Define("database.url", config.KindString, "", "PostgreSQL URL"),
		page:    r.Define("sync.page_size", config.KindInt, "100", "events per catch-up page"),
		body:    r.Define("http.max_body_bytes", config.KindBytes, "1048576", "largest request body"),
		timeout: r.Define("http.shutdown_timeout", config.KindDuration, "15s", "drain time"),
		debug:   r.Define("log.debug_sql", config.KindBool, "false", "log every SQL statement"),
	}
}

// writeFile writes content to a file in a fresh temporary directory.
func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bothy.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDefinePanics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		key   string
		kind  config.Kind
		def   string
		means string
	}{
		{"duplicate", "http.addr", config.KindString, "", "again"},
		{"env clash", "http_addr.x", config.KindString, "", "same env as http.addr.x"},
		{"nested under a key", "http.addr.port", config.KindInt, "1", "would nest"},
		{"parent of a key", "sync", config.KindInt, "1", "single part"},
		{"parent of a key two parts", "a.b", config.KindInt, "1", "parent of a.b.c"},
		{"upper case", "HTTP.addr", config.KindString, "", "upper"},
		{"single part", "addr", config.KindString, "", "no dot"},
		{"empty part", "http..addr", config.KindString, "", "double dot"},
		{"trailing dot", "http.", config.KindString, "", "trailing dot"},
		{"dash", "http.max-body", config.KindString, "", "dash"},
		{"leading digit", "http.1addr", config.KindString, "", "digit"},
		{"unknown kind", "http.mode", config.Kind("float"), "1.5", "float"},
		{"bad int default", "sync.limit", config.KindInt, "ten", "int"},
		{"negative bytes default", "sync.max_bytes", config.KindBytes, "-1", "bytes"},
		{"bad duration default", "sync.window", config.KindDuration, "5 minutes", "duration"},
		{"negative duration default", "sync.window", config.KindDuration, "-5s", "duration"},
		{"bad bool default", "sync.enabled", config.KindBool, "yes", "bool"},
		{"backtick default", "sync.name", config.KindString, "a`b", "string"},
		{"pipe default", "sync.name", config.KindString, "a|b", "string"},
		{"spaced default", "sync.name", config.KindString, " a", "string"},
		{"empty meaning", "sync.name", config.KindString, "", " "},
		{"pipe in meaning", "sync.name", config.KindString, "", "a | b"},
		{"newline in meaning", "sync.name", config.KindString, "", "a\nb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := config.NewRegister()
			r.Define("http.addr", config.KindString, "127.0.0.1:8080", "listen address")
			r.Define("http_addr.x_y", config.KindString, "", "placeholder")
			r.Define("http_addr.y", config.KindString, "", "placeholder")
			r.Define("a.b.c", config.KindString, "", "placeholder")
			if tt.name == "env clash" {
				r.Define("http.addr_x", config.KindString, "", "placeholder")
			}
			defer func() {
				v := recover()
				if v == nil {
					t.Fatalf("Define(%q, %q, %q) did not panic", tt.key, tt.kind, tt.def)
				}
				if msg := fmt.Sprint(v); !strings.Contains(msg, tt.key) {
					t.Fatalf("panic %q does not name the key %s", msg, tt.key)
				}
			}()
			r.Define(tt.key, tt.kind, tt.def, tt.means)
		})
	}
}

func TestRegisteredIsSorted(t *testing.T) {
	t.Parallel()
	k := newTestKeys()
	var names []string
	for _, key := range k.reg.Registered() {
		names = append(names, key.Name)
	}
	want := "database.url http.addr http.max_body_bytes http.shutdown_timeout log.debug_sql sync.page_size"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("Registered = %s, want %s", got, want)
	}
}

func TestKernelKeys(t *testing.T) {
	t.Parallel()
	md, err := os.ReadFile("testdata/kernel-keys.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := config.CheckDocumented(config.Registered(), md); err != nil {
		t.Fatalf("kernel keys differ from the plan's table: %v", err)
	}
	c, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.String(config.HTTPAddr); got != "127.0.0.1:8080" {
		t.Fatalf("http.addr = %q", got)
	}
	if got := c.Bytes(config.HTTPMaxBodyBytes); got != 1<<20 {
		t.Fatalf("http.max_body_bytes = %d", got)
	}
	if got := c.Duration(config.HTTPReadHeaderTimeout); got != 10*time.Second {
		t.Fatalf("http.read_header_timeout = %v", got)
	}
	if got := c.Duration(config.HTTPShutdownTimeout); got != 15*time.Second {
		t.Fatalf("http.shutdown_timeout = %v", got)
	}
	if got := c.String(config.DatabaseURL); got != "" {
		t.Fatalf("database.url = %q", got)
	}
	if got := c.Int(config.DatabaseMaxConns); got != 20 {
		t.Fatalf("database.max_conns = %d", got)
	}
	if got := c.String(config.EmbeddedDir); got != ".bothy" {
		t.Fatalf("embedded.dir = %q", got)
	}
	if got := c.String(config.LogLevel); got != "info" {
		t.Fatalf("log.level = %q", got)
	}
	if err := c.Err(); err != nil {
		t.Fatalf("Err = %v", err)
	}
}

func TestPrecedence(t *testing.T) {
	t.Parallel()
	k := newTestKeys()
	path := writeFile(t, "http.addr: 0.0.0.0:9000\nsync:\n  page_size: 50\nhttp.shutdown_timeout: 30s\n")
	c, err := k.reg.Load(path, []string{
		"BOTHY_SYNC_PAGE_SIZE=25",
		"BOTHY_LOG_DEBUG_SQL=true",
		"LANG=C.UTF-8",
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"file beats default", c.String(k.addr), "0.0.0.0:9000"},
		{"env beats file", c.Int(k.page), 25},
		{"env beats default", c.Bool(k.debug), true},
		{"file duration", c.Duration(k.timeout), 30 * time.Second},
		{"default", c.Bytes(k.body), int64(1048576)},
		{"empty default", c.String(k.url), ""},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if err := c.Err(); err != nil {
		t.Fatalf("Err = %v", err)
	}
}

func TestYAMLShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		addr string
		page int
	}{
		{"flat", "http.addr: 127.0.0.1:9001\nsync.page_size: 7\n", "127.0.0.1:9001", 7},
		{"nested", "http:\n  addr: 127.0.0.1:9002\nsync:\n  page_size: 8\n", "127.0.0.1:9002", 8},
		{"mixed", "http:\n  addr: \"127.0.0.1:9003\"\nsync.page_size: 9\n", "127.0.0.1:9003", 9},
		{"alias", "base: &p 11\nsync:\n  page_size: *p\n", "127.0.0.1:8080", 11},
		{"empty file", "", "127.0.0.1:8080", 100},
		{"comments only", "# nothing set yet\n", "127.0.0.1:8080", 100},
		{"null document", "~\n", "127.0.0.1:8080", 100},
		{"null value is empty", "http:\n  addr:\n", "", 100},
		{"empty mapping", "http: {}\n", "127.0.0.1:8080", 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := newTestKeys()
			c, err := k.reg.Load(writeFile(t, tt.yaml), nil)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got := c.String(k.addr); got != tt.addr {
				t.Errorf("http.addr = %q, want %q", got, tt.addr)
			}
			if got := c.Int(k.page); got != tt.page {
				t.Errorf("sync.page_size = %d, want %d", got, tt.page)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"invalid yaml", "http: [\n", "parse config file"},
		{"top-level list", "- a\n- b\n", "want a mapping"},
		{"list value", "http:\n  addr: [a, b]\n", "key http.addr: want a single value"},
		{"flat and nested twice", "http.addr: a\nhttp:\n  addr: b\n", "key http.addr set twice"},
		{"non-scalar key", "? [a, b]\n: c\n", "want a plain key"},
		{"nested error", "http:\n  inner:\n    addr: [a]\n", "key http.inner.addr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, tt.yaml)
			_, err := newTestKeys().reg.Load(path, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "absent.yaml")
		_, err := newTestKeys().reg.Load(path, nil)
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "absent.yaml") {
			t.Fatalf("Load err = %v, want a not-exist error naming the file", err)
		}
	})
}

func TestEnvNames(t *testing.T) {
	t.Parallel()
	k := newTestKeys()
	tests := []struct {
		key  config.Key
		want string
	}{
		{k.addr, "BOTHY_HTTP_ADDR"},
		{k.body, "BOTHY_HTTP_MAX_BODY_BYTES"},
		{k.page, "BOTHY_SYNC_PAGE_SIZE"},
		{k.debug, "BOTHY_LOG_DEBUG_SQL"},
	}
	for _, tt := range tests {
		if got := tt.key.EnvName(); got != tt.want {
			t.Errorf("EnvName(%s) = %s, want %s", tt.key.Name, got, tt.want)
		}
	}
	c, err := k.reg.Load("", []string{
		"BOTHY_HTTP_MAX_BODY_BYTES=2048",
		"BOTHY_DATABASE_URL=postgres://sam@db.example.com/bothy",
		"BOTHY_HTTP_ADDR=", // set but empty: empty wins over the default
		"BOTHY_CONFIG=/etc/bothy.yaml",
		"BOTHY_MALFORMED",
		"bothy_sync_page_size=3", // variables are case-sensitive
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Bytes(k.body); got != 2048 {
		t.Errorf("bytes = %d", got)
	}
	if got := c.String(k.url); got != "postgres://sam@db.example.com/bothy" {
		t.Errorf("url = %q", got)
	}
	if got := c.String(k.addr); got != "" {
		t.Errorf("addr = %q, want empty", got)
	}
	if got := c.Int(k.page); got != 100 {
		t.Errorf("page = %d, want the default", got)
	}
	if err := c.Err(); err != nil {
		t.Fatalf("Err = %v (BOTHY_CONFIG must not count as unknown)", err)
	}
}

func TestBadValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		env    string
		file   string
		read   func(k testKeys, c *config.Config) any
		want   any
		errHas []string
	}{
		{"int from env", "BOTHY_SYNC_PAGE_SIZE=abc", "", func(k testKeys, c *config.Config) any { return c.Int(k.page) }, 100,
			[]string{"sync.page_size", "environment variable BOTHY_SYNC_PAGE_SIZE", `"abc"`}},
		{"int from file", "", "sync.page_size: abc\n", func(k testKeys, c *config.Config) any { return c.Int(k.page) }, 100,
			[]string{"sync.page_size", "config file ", "bothy.yaml", `"abc"`}},
		{"negative bytes", "BOTHY_HTTP_MAX_BODY_BYTES=-5", "", func(k testKeys, c *config.Config) any { return c.Bytes(k.body) }, int64(1048576),
			[]string{"http.max_body_bytes", "BOTHY_HTTP_MAX_BODY_BYTES", "negative"}},
		{"bytes with unit", "BOTHY_HTTP_MAX_BODY_BYTES=1MB", "", func(k testKeys, c *config.Config) any { return c.Bytes(k.body) }, int64(1048576),
			[]string{"http.max_body_bytes", "not a number of bytes"}},
		{"duration without unit", "", "http:\n  shutdown_timeout: 15\n", func(k testKeys, c *config.Config) any { return c.Duration(k.timeout) }, 15 * time.Second,
			[]string{"http.shutdown_timeout", "not a duration"}},
		{"negative duration", "BOTHY_HTTP_SHUTDOWN_TIMEOUT=-1s", "", func(k testKeys, c *config.Config) any { return c.Duration(k.timeout) }, 15 * time.Second,
			[]string{"http.shutdown_timeout", "negative duration"}},
		{"bool", "BOTHY_LOG_DEBUG_SQL=yes", "", func(k testKeys, c *config.Config) any { return c.Bool(k.debug) }, false,
			[]string{"log.debug_sql", "not true or false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := newTestKeys()
			path := ""
			if tt.file != "" {
				path = writeFile(t, tt.file)
			}
			var env []string
			if tt.env != "" {
				env = []string{tt.env}
			}
			c, err := k.reg.Load(path, env)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // a second read adds no second error
				if got := tt.read(k, c); got != tt.want {
					t.Fatalf("read = %v, want default %v", got, tt.want)
				}
			}
			err = c.Err()
			if err == nil {
				t.Fatal("Err = nil, want the bad value reported")
			}
			for _, s := range tt.errHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Err = %q, want it to contain %q", err, s)
				}
			}
			if n := strings.Count(err.Error(), "\n") + 1; n != 1 {
				t.Errorf("Err has %d lines, want 1: %v", n, err)
			}
		})
	}
}

func TestUnknownKeys(t *testing.T) {
	t.Parallel()
	k := newTestKeys()
	path := writeFile(t, "http:\n  adr: 127.0.0.1:1\nsync.page_size: 5\nsync:\n  catchup_max_events: 10\n")
	c, err := k.reg.Load(path, []string{"BOTHY_SYNC_PAGESIZE=5", "BOTHY_GATEWAY_SEND_BUFFER=64", "BOTHY_HTTP_ADDR=127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Err()
	if err == nil {
		t.Fatal("Err = nil, want unknown keys reported")
	}
	for _, s := range []string{"unknown key http.adr", "unknown key sync.catchup_max_events", "BOTHY_SYNC_PAGESIZE", "BOTHY_GATEWAY_SEND_BUFFER"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Err = %q, want it to contain %q", err, s)
		}
	}
	for _, s := range []string{"sync.page_size", "BOTHY_HTTP_ADDR"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("Err = %q names the known %s", err, s)
		}
	}
	// Keys registered after Load (a module's package init in real life) count when Err runs.
	k.reg.Define("sync.catchup_max_events", config.KindInt, "1000", "most events per catch-up")
	k.reg.Define("gateway.send_buffer", config.KindInt, "64", "frames buffered per connection")
	err = c.Err()
	if err == nil || strings.Contains(err.Error(), "catchup_max_events") || strings.Contains(err.Error(), "GATEWAY") {
		t.Fatalf("Err after Define = %v, want only the two typos", err)
	}
	if got := strings.Count(err.Error(), "\n") + 1; got != 2 {
		t.Fatalf("Err has %d lines, want 2: %v", got, err)
	}
}

func TestReadMistakes(t *testing.T) {
	t.Parallel()
	k := newTestKeys()
	c, err := k.reg.Load("", []string{"BOTHY_SYNC_PAGE_SIZE=7"})
	if err != nil {
		t.Fatal(err)
	}
	stray := config.Key{Name: "stray.key", Kind: config.KindInt, Default: "3", Meaning: "never defined"}
	if got := c.Int(stray); got != 3 {
		t.Errorf("unregistered read = %d, want its own default 3", got)
	}
	if got := c.String(k.page); got != "100" {
		t.Errorf("int key read as string = %q, want the default text", got)
	}
	if got := c.Duration(config.Key{Name: "stray.bad", Kind: config.KindDuration, Default: "soon"}); got != 0 {
		t.Errorf("unparsable stray default = %v, want 0", got)
	}
	err = c.Err()
	if err == nil {
		t.Fatal("Err = nil")
	}
	for _, s := range []string{"stray.key: read but not registered", "sync.page_size: registered as int, read as string", "stray.bad"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Err = %q, want it to contain %q", err, s)
		}
	}
}

func TestReads(t *testing.T) {
	t.Parallel()
	k := newTestKeys()
	c, err := k.reg.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Reads(); len(got) != 0 {
		t.Fatalf("Reads before reading = %v", got)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			c.Int(k.page)
			c.String(k.addr)
			c.Bool(k.debug)
			c.Int(k.page)
		})
	}
	wg.Wait()
	want := "http.addr log.debug_sql sync.page_size"
	if got := strings.Join(c.Reads(), " "); got != want {
		t.Fatalf("Reads = %s, want %s", got, want)
	}
}
