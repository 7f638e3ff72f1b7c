package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/logging"
	"bothy.example.com/server/internal/wire"
)

// Exit codes: 0 success, 1 the command failed (one JSON log line on stderr
// says why), 2 the command line is wrong (usage on stderr).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

const usage = `usage:
  bothy serve [--roles api,gateway,maintenance] [--bootstrap-owner] [--config FILE]
                                  serve the roles until SIGINT or SIGTERM; with
                                  --bootstrap-owner, first create the instance's
                                  owner if it has none and print their token
  bothy migrate [--config FILE]   apply database migrations, create the instance
  bothy maintain [--config FILE]  run the event log's partition upkeep once
  bothy admin bootstrap --name NAME --handle HANDLE --email EMAIL [--config FILE]
                                  create the first owner; prints {"principal_id","token"}
  bothy admin token --principal ID [--config FILE]
                                  issue a token for a principal; prints {"token","token_id"}
  bothy admin demo [--json] [--config FILE]
                                  build the demo world (make demo); prints fresh tokens
  bothy admin flags list|define|set|clear|delete ... [--config FILE]
                                  administer feature flags (bothy admin flags -h)
  bothy admin backup [--file FILE] [--config FILE]
                                  write the database into a pg_dump archive; prints its report
  bothy admin restore --file FILE [--allow-other-instance] [--config FILE]
                                  restore a backup (bothy serve stopped) and rotate the sync
                                  epoch; prints its report
  bothy ingest git --repo PATH --channel ID [--issues-json FILE] [--prs-json FILE]
                   [--max-items N] [--config FILE]
                                  write a repository's pull requests, issues and commits
                                  into a channel; prints the JSON report (bothy ingest -h)
  bothy version                   print the build as JSON

The configuration file may also be named by BOTHY_CONFIG; every key can be
set with a BOTHY_ environment variable (docs/operations/configuration.md).
`

// errUsage marks a command-line mistake: exit code 2 with the usage text.
var errUsage = errors.New("usage")

// errHelp marks an explicit request for help (-h after a command): the
// flag set printed its flags, and the exit code is 0.
var errHelp = errors.New("help")

// run is main without the process: it returns the exit code, so tests can
// call it with their own arguments, environment and output.
func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		_, _ = fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], environ, stdout, stderr)
	case "migrate":
		err = migrateCmd(ctx, args[1:], environ, stdout, stderr)
	case "maintain":
		err = maintainCmd(ctx, args[1:], environ, stdout, stderr)
	case "admin":
		err = adminCmd(ctx, args[1:], environ, stdout, stderr)
	case "ingest":
		err = ingestCmd(ctx, args[1:], environ, stdout, stderr)
	case "version":
		err = printVersion(args[1:], stdout, version)
	case "help", "-h", "--help":
		_, _ = fmt.Fprint(stdout, usage)
		return exitOK
	default:
		err = fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.Is(err, errUsage):
		_, _ = fmt.Fprintf(stderr, "bothy: %v\n\n%s", err, usage)
		return exitUsage
	default:
		return exitFailure
	}
}

// failure is an error already logged; run only turns it into exit code 1.
type failure struct{ err error }

func (f failure) Error() string { return f.err.Error() }
func (f failure) Unwrap() error { return f.err }

// fail logs err as the one JSON line a failed command leaves on stderr.
func fail(ctx context.Context, logger *slog.Logger, msg string, err error) error {
	logger.ErrorContext(ctx, msg, "error", err.Error())
	return failure{err}
}

// flags parses the flags of a subcommand: --config (falling back to
// BOTHY_CONFIG) and those define adds (nil: none).
func flags(name string, args, environ []string, stderr io.Writer, define func(fs *flag.FlagSet)) (configPath string, err error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&configPath, "config", envValue(environ, config.EnvConfigFile), "configuration file (YAML)")
	if define != nil {
		define(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", errHelp
		}
		return "", fmt.Errorf("%w: %s: %w", errUsage, name, err)
	}
	if fs.NArg() > 0 {
		return "", fmt.Errorf("%w: %s: unexpected argument %q", errUsage, name, fs.Arg(0))
	}
	return configPath, nil
}

// envValue returns the value of name in environ, or "".
func envValue(environ []string, name string) string {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// setup loads the configuration and builds the logger. Before the logger
// exists, failures are logged by a fallback JSON logger, so the one-line
// failure contract holds from the first moment.
func setup(ctx context.Context, configPath string, environ []string, stderr io.Writer) (*config.Config, *slog.Logger, error) {
	fallback := logging.New(stderr, slog.LevelInfo)
	cfg, err := config.Load(configPath, environ)
	if err != nil {
		return nil, nil, fail(ctx, fallback, "load configuration", err)
	}
	logger, err := wire.NewLogger(cfg, stderr)
	if err != nil {
		return nil, nil, fail(ctx, fallback, "configure logging", err)
	}
	// Libraries that log through slog's default logger write JSON lines too.
	slog.SetDefault(logger)
	// Unknown keys (typos) stop the process before anything starts.
	if err := cfg.Err(); err != nil {
		return nil, nil, fail(ctx, logger, "configuration", err)
	}
	return cfg, logger, nil
}

// serveOptions are the flags of bothy serve.
type serveOptions struct {
	roles          string
	bootstrapOwner bool
	owner          ownerFlags
}

// serve runs the server until SIGINT or SIGTERM, then drains it, closes the
// pool and stops the embedded default. With --bootstrap-owner it first
// creates the instance's owner when there is none and prints their token
// and a first curl command on stdout (never in the log).
func serve(ctx context.Context, args, environ []string, stdout, stderr io.Writer) (err error) {
	var o serveOptions
	configPath, err := flags("serve", args, environ, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&o.roles, "roles", strings.Join(wire.Roles(), ","), "comma-separated roles to serve")
		fs.BoolVar(&o.bootstrapOwner, "bootstrap-owner", false,
			"create the owner (--owner-name, --owner-handle, --owner-email) when the instance has none, and print their token (make run sets it)")
		fs.StringVar(&o.owner.name, "owner-name", "Alex", "display name of the owner --bootstrap-owner creates")
		fs.StringVar(&o.owner.handle, "owner-handle", "alex", "handle of the owner --bootstrap-owner creates")
		fs.StringVar(&o.owner.email, "owner-email", "alex@example.com", "email of the owner --bootstrap-owner creates")
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cfg, logger, err := setup(ctx, configPath, environ, stderr)
	if err != nil {
		return err
	}
	url, stopDB, err := wire.Database(ctx, cfg, logger)
	if err != nil {
		return startFailed(ctx, logger, "start database", err)
	}
	defer func() {
		if serr := stopDB(context.WithoutCancel(ctx)); serr != nil && err == nil {
			err = fail(ctx, logger, "stop database", serr)
		}
	}()
	app, err := wire.New(ctx, cfg, logger, wire.Options{
		Roles:       splitRoles(o.roles),
		DatabaseURL: url,
		Migrate:     wire.UsesEmbedded(cfg),
	})
	if err != nil {
		return startFailed(ctx, logger, "wire", err)
	}
	defer app.Close()
	// The start-up check for a restore behind bothy's back (ADR 0021) needs the database; one
	// that is down or not migrated yet does not stop the process (readiness says so).
	if err := app.ReconcileClusterIdentity(ctx); err != nil {
		logger.WarnContext(ctx, "skipped the start-up check for a restore behind bothy's back", "error", err.Error())
	}
	if o.bootstrapOwner {
		owner, created, err := bootstrapIfNoOwner(ctx, app.Ports(), o.owner.name, o.owner.handle, o.owner.email)
		if err != nil {
			return startFailed(ctx, logger, "bootstrap the owner", err)
		}
		if created {
			logger.InfoContext(ctx, "created the first owner", "principal_id", owner.PrincipalID.String())
			return serveAnnounced(ctx, app, logger, stdout, o.owner, owner)
		}
	}
	if err := app.Serve(ctx); err != nil {
		return fail(ctx, logger, "serve", err)
	}
	logger.InfoContext(ctx, "stopped")
	return nil
}

// serveAnnounced serves after --bootstrap-owner created the owner: it
// listens first, so the curl command it prints names the real address, then
// prints the owner's token on stdout and serves.
func serveAnnounced(ctx context.Context, app *wire.App, logger *slog.Logger, stdout io.Writer, who ownerFlags, owner owner) error {
	if !app.ServesHTTP() {
		announceOwner(stdout, who, owner, "")
		if err := app.Serve(ctx); err != nil {
			return fail(ctx, logger, "serve", err)
		}
		logger.InfoContext(ctx, "stopped")
		return nil
	}
	ln, err := app.Listen(ctx)
	if err != nil {
		return fail(ctx, logger, "serve", err)
	}
	announceOwner(stdout, who, owner, "http://"+curlHost(ln.Addr()))
	if err := app.ServeListener(ctx, ln); err != nil {
		return fail(ctx, logger, "serve", err)
	}
	logger.InfoContext(ctx, "stopped")
	return nil
}

// startFailed reports a failed start, except when SIGINT or SIGTERM
// cancelled it: stopping a process that is still starting is a clean exit.
func startFailed(ctx context.Context, logger *slog.Logger, msg string, err error) error {
	if ctx.Err() != nil {
		logger.InfoContext(ctx, "stopped while starting", "step", msg)
		return nil
	}
	return fail(ctx, logger, msg, err)
}

// splitRoles turns "api, gateway" into its role names.
func splitRoles(s string) []string {
	var out []string
	for r := range strings.SplitSeq(s, ",") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// migrateCmd applies the migrations and prints {"applied": n} on stdout.
func migrateCmd(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	configPath, err := flags("migrate", args, environ, stderr, nil)
	if err != nil {
		return err
	}
	return withDatabase(ctx, configPath, environ, stderr, func(ctx context.Context, cfg *config.Config, logger *slog.Logger, url string) error {
		n, err := wire.Migrate(ctx, cfg, url, logger)
		if err != nil {
			return fail(ctx, logger, "migrate", err)
		}
		if err := cfg.Err(); err != nil {
			return fail(ctx, logger, "configuration", err)
		}
		logger.InfoContext(ctx, "migrations applied", "applied", n)
		return writeJSON(stdout, map[string]int{"applied": n})
	})
}

// maintainCmd runs one partition upkeep of the event log and prints its
// report as JSON on stdout (partitions created and dropped, events moved out
// of the default partition, the retention horizon).
func maintainCmd(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	configPath, err := flags("maintain", args, environ, stderr, nil)
	if err != nil {
		return err
	}
	return withApp(ctx, configPath, environ, stderr, func(ctx context.Context, app *wire.App, logger *slog.Logger) error {
		rep, err := app.Maintain(ctx)
		if err != nil {
			return fail(ctx, logger, "maintain", err)
		}
		logger.InfoContext(ctx, "partition upkeep done", "created", len(rep.Created), "dropped", len(rep.Dropped), "horizon_seq", rep.HorizonSeq)
		return writeJSON(stdout, rep)
	})
}

// buildInfo is what bothy version prints.
type buildInfo struct {
	Version   string `json:"version"`
	GoVersion string `json:"go_version"`
	Commit    string `json:"commit"`
}

// version is stamped by make build (-ldflags "-X main.version=..." with
// git describe); empty in a plain go build, which falls back to the module
// version.
var version string

// printVersion prints the build as JSON: the stamped version, else the
// module version ((devel) for a local build); the Go version; and the VCS
// commit (unknown when the binary was built without VCS stamping).
func printVersion(args []string, stdout io.Writer, stamped string) error {
	if len(args) > 0 {
		return fmt.Errorf("%w: version: unexpected argument %q", errUsage, args[0])
	}
	info := buildInfo{Version: "(devel)", GoVersion: runtime.Version(), Commit: "unknown"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				info.Commit = s.Value
			}
		}
	}
	if stamped != "" {
		info.Version = stamped
	}
	return writeJSON(stdout, info)
}

// writeJSON prints v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	if err := json.NewEncoder(w).Encode(v); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
