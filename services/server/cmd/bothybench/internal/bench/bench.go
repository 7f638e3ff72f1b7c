package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/internal/kernel/config"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	"bothy.example.com/server/internal/wire"
)

// Case is one whole-system case of the benchmark (ADR 0038): what -cases names, the shared
// world it runs in, if any, and how it measures. Every case is measured beside its baseline
// in the same run; what it returns are the sections of the report it measured.
type Case interface {
	// Name is the case's name in -cases.
	Name() string
	// World is the key of the shared world the case runs in (one the runner keeps open from
	// the first case that opens it to the last selected case that names it), or "" when the
	// case runs on the main App alone or on a world of its own that it closes itself.
	World() string
	// Run measures the case and returns its sections of the report.
	Run(ctx context.Context, env *Env) ([]Section, error)
}

// WebClientCase is a case that serves the web client's build from its shared world's App:
// the runner tells the world before it opens (benchEnv.WebClient).
type WebClientCase interface {
	Case
	// ServesWebClient is true when the case's world must serve the web client's build.
	ServesWebClient() bool
}

// Section is one part of the report: its member of benchmarks.json, its part of
// benchmarks.md and its acceptance targets.
type Section interface {
	// Key is the section's member name in benchmarks.json.
	Key() string
	// Markdown writes the section's part of benchmarks.md through w.
	Markdown(w func(format string, args ...any))
	// Targets are the section's acceptance targets, evaluated on its figures.
	Targets() []Target
}

// targetNotes is a section with a note after the report's table of targets, about its own
// targets.
type targetNotes interface {
	Section
	// TargetNotes writes the note through w.
	TargetNotes(w func(format string, args ...any))
}

// Env is what every case runs with: the options, the main App (the api role) on the
// cluster's default database with a bare pool beside it, the cluster's URLs for cases that
// wire an App of their own, and the shared worlds that outlive one case.
type Env struct {
	Options  Options
	URL      string
	SyncURL  string
	App      *wire.App
	Bare     *pgxpool.Pool
	Settings settings
	Logger   *slog.Logger
	Progress func(format string, args ...any)
	// WebClient is true when a selected case serves the web client from a shared world.
	WebClient bool
	worlds    map[string]*sharedWorld
}

// sharedWorld is an open shared world and how to close it.
type sharedWorld struct {
	value any
	close func() error
}

// Shared returns the shared world key, opening it with open the first time; the runner
// closes it after the last selected case whose World is key.
func (e *Env) Shared(key string, open func() (any, func() error, error)) (any, error) {
	if w, ok := e.worlds[key]; ok {
		return w.value, nil
	}
	v, closeFn, err := open()
	if err != nil {
		return nil, err
	}
	if e.worlds == nil {
		e.worlds = map[string]*sharedWorld{}
	}
	e.worlds[key] = &sharedWorld{value: v, close: closeFn}
	return v, nil
}

// release closes the shared world key, if open.
func (e *Env) release(key string) error {
	w, ok := e.worlds[key]
	if !ok {
		return nil
	}
	delete(e.worlds, key)
	return w.close()
}

// Measure wires an App on the database at url (migrating it, creating the instance and its
// partitions), runs the selected cases in the order of cases and returns the report, its
// sections in the order of order (their keys). Cases in a shared world (the sync world, on
// the database at syncURL) find it in the env.
func Measure(ctx context.Context, cases []Case, order []string, o Options, url, syncURL string, logger *slog.Logger, progress func(string, ...any)) (rep *Report, err error) {
	cfg, err := config.Load("", []string{
		config.DatabaseURL.EnvName() + "=" + url,
		config.DatabaseMaxConns.EnvName() + "=" + fmt.Sprint(MaxConns),
	})
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	// The api role only: the postMessage case serves HTTP with this App, and the tail latency
	// case runs the App's log tail itself, which the gateway role would start a second time.
	app, err := wire.New(ctx, cfg, logger, wire.Options{Migrate: true, Roles: []string{wire.RoleAPI}})
	if err != nil {
		return nil, fmt.Errorf("wire: %w", err)
	}
	defer app.Close()
	bare, err := wire.NewPool(ctx, url, MaxConns)
	if err != nil {
		return nil, err
	}
	defer bare.Close()

	env := &Env{
		Options: o, URL: url, SyncURL: syncURL, App: app, Bare: bare, Logger: logger, Progress: progress,
		Settings: settings{
			Duration:       o.Duration.String(),
			Warmup:         o.Warmup.String(),
			Rate:           o.Rate,
			LatencyWriters: o.LatWriter,
			// Read like wire reads it; wire.New already rejected an invalid value.
			AppendConcurrency: syncpg.AppendConfigFrom(cfg).Concurrency,
		},
	}
	defer func() {
		for key := range env.worlds {
			if cerr := env.release(key); cerr != nil && err == nil {
				err = cerr
			}
		}
	}()
	rep = &Report{Settings: env.Settings}
	if rep.Machine, err = machineFacts(ctx, app); err != nil {
		return nil, err
	}
	var selected []Case
	for _, c := range cases {
		if o.Cases[c.Name()] {
			selected = append(selected, c)
			if wc, ok := c.(WebClientCase); ok && wc.ServesWebClient() {
				env.WebClient = true
			}
		}
	}
	for i, c := range selected {
		if err := profiled(c.Name(), func() error {
			secs, err := c.Run(ctx, env)
			rep.Sections = append(rep.Sections, secs...)
			return err
		}); err != nil {
			return nil, err
		}
		if key := c.World(); key != "" && !laterUses(selected[i+1:], key) {
			if err := env.release(key); err != nil {
				return nil, err
			}
		}
	}
	rep.Order(order)
	return rep, nil
}

// laterUses reports whether a case of cases runs in the shared world key.
func laterUses(cases []Case, key string) bool {
	for _, c := range cases {
		if c.World() == key {
			return true
		}
	}
	return false
}

// Report is everything one run measured; benchmarks.json is its JSON form (MarshalJSON).
type Report struct {
	Machine  machine
	Settings settings
	Sections []Section
	Targets  []Target
}

// Order sorts the sections by the position of their keys in keys (unknown keys last, in the
// order they ran) and evaluates the targets, section by section.
func (r *Report) Order(keys []string) {
	rank := func(s Section) int {
		for i, k := range keys {
			if k == s.Key() {
				return i
			}
		}
		return len(keys)
	}
	sorted := make([]Section, 0, len(r.Sections))
	for i := 0; i <= len(keys); i++ {
		for _, s := range r.Sections {
			if rank(s) == i {
				sorted = append(sorted, s)
			}
		}
	}
	r.Sections = sorted
	r.Targets = nil
	for _, s := range r.Sections {
		r.Targets = append(r.Targets, s.Targets()...)
	}
}

// ReportSection returns the report's section of type T, or T's zero value when the report has
// none (its case did not run).
func ReportSection[T Section](r *Report) T {
	for _, s := range r.Sections {
		if t, ok := s.(T); ok {
			return t
		}
	}
	var zero T
	return zero
}

// MarshalJSON writes the report as one object: machine, settings, a member per section in
// the report's order, and targets.
func (r Report) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	member := func(key string, v any) error {
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode %s: %w", key, err)
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(raw)
		return nil
	}
	if err := member("machine", r.Machine); err != nil {
		return nil, err
	}
	if err := member("settings", r.Settings); err != nil {
		return nil, err
	}
	for _, s := range r.Sections {
		if err := member(s.Key(), s); err != nil {
			return nil, err
		}
	}
	targets := r.Targets
	if targets == nil {
		targets = []Target{}
	}
	if err := member("targets", targets); err != nil {
		return nil, err
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Markdown renders the report as docs/benchmarks.md.
func (r *Report) Markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	m := r.Machine
	w("# Benchmarks\n\n")
	w("Written by `make bench` (`services/server/cmd/bothybench`); do not edit by hand. Every figure\n")
	w("is measured beside its baseline in the same run on a throwaway PostgreSQL cluster, so the\n")
	w("ratio (figure / baseline) holds on a noisy machine better than either number.\n\n")
	w("- Machine: %d cores (GOMAXPROCS %d), %s, %s.\n", m.Cores, m.GOMAXPROCS, m.OS, m.GoVersion)
	if k := m.Kernel.markdown(); k != "" {
		w("- Kernel: %s.\n", k)
	}
	w("- PostgreSQL %s on a throwaway cluster with its default settings:\n", m.PostgresVersion)
	w("  fsync %s, synchronous_commit %s, wal_sync_method %s.\n", m.Fsync, m.SynchronousCommit, m.WalSyncMethod)
	w("- Run of %s: each case ran %s after a %s warm-up.\n\n", m.Date, r.Settings.Duration, r.Settings.Warmup)

	for _, s := range r.Sections {
		s.Markdown(w)
	}

	w("\n## Targets\n\n")
	w("The acceptance targets the benchmark measures (spec 07). ")
	w("Figure: the quotient the target is about (for the append targets, the appender's); bare\n")
	w("loop: the same quotient for the bare loop (no admission), where it has one, for comparison.\n\n")
	w("| target | figure | bare loop | limit | met |\n")
	w("| --- | ---: | ---: | --- | --- |\n")
	for _, tg := range r.Targets {
		met := "yes"
		if !tg.Pass {
			met = "**no**"
		}
		base := ""
		if tg.Baseline != 0 {
			base = fmt.Sprintf("%.2f", tg.Baseline)
		}
		value := fmt.Sprintf("%.2f", tg.Value)
		if tg.Value >= 1000 {
			value = fmt.Sprintf("%.0f", tg.Value)
		}
		w("| %s | %s | %s | %s | %s |\n", tg.Name, value, base, tg.Limit, met)
	}
	for _, s := range r.Sections {
		if n, ok := s.(targetNotes); ok {
			n.TargetNotes(w)
		}
	}
	return b.String()
}
