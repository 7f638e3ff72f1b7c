package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/signal"
	"strconv"
	"syscall"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/wire"
)

// adminUsage is the help of bothy admin.
const adminUsage = `usage:
  bothy admin bootstrap --name NAME --handle HANDLE --email EMAIL [--config FILE]
      create the instance's first owner (a person with an owner grant) and
      their first token; prints {"principal_id": ..., "token": ...}. Refuses
      (exit code 1) when the instance has an owner already.
  bothy admin token --principal ID [--config FILE]
      issue a token (bound to no device) for a principal; prints
      {"token": ..., "token_id": ...}.
  bothy admin token list --principal ID [--config FILE]
      print the principal's tokens, revoked and expired ones included, never
      a secret: {"tokens": [{"id", "device_name", "created_at",
      "last_used_at", "expires_at", "revoked_at", ...}]}.
  bothy admin token revoke --token ID [--config FILE]
      revoke a token at once (idempotent): its requests answer 401 and its
      gateway connections close (the running servers' log tails read the
      token.revoked event); prints the token.
  bothy admin principal deactivate --principal ID [--config FILE]
      deactivate a principal (idempotent): its tokens answer 401 and its
      gateway connections close; refused (exit code 1) for the last active
      owner; prints the principal.
  bothy admin principal reactivate --principal ID [--config FILE]
      reactivate a principal: its tokens that are neither revoked nor expired
      work again; prints the principal.
  bothy admin demo [--json] [--echo-token-file FILE] [--config FILE]
      build the demo world, or complete it (make demo): Alex (the owner,
      bootstrapped when the instance has none), Sam, Robin and the agents
      Helper and Echo with their grants; the spaces Support and Marketing
      with their channels; threads with @mentions; read states and drafts of
      Sam and Robin. A rerun creates nothing. Prints each person's fresh
      token and curl commands (with --json: one line of JSON); with
      --echo-token-file, writes Echo's token into FILE (mode 0600) for the
      example agent examples/agents/echo.
  bothy admin flags list [--config FILE]
      print every feature flag with its overrides: {"flags": [...]}.
  bothy admin flags define --key KEY [--description TEXT] [--default true|false]
      create a flag or change its description and default; prints the flag.
  bothy admin flags set --key KEY --target TARGET --enabled true|false
      set the flag's value for TARGET: kind:person, kind:agent, kind:app or
      principal:<id>; prints the flag.
  bothy admin flags clear --key KEY --target TARGET
      remove the flag's override for TARGET; prints the flag.
  bothy admin flags delete --key KEY
      delete the flag and its overrides; prints {"deleted": KEY}.

  bothy admin backup [--file FILE] [--config FILE]
      write the database (the embedded default, or database.url) into a
      pg_dump archive (--format=custom; default bothy-<UTC time>.dump here);
      safe while bothy serve runs. Prints {"file", "bytes", "head_seq", ...}.
  bothy admin restore --file FILE [--allow-other-instance] [--config FILE]
      replace the database with a backup and rotate the sync epoch, so that
      every client resyncs (docs/operations/backup-and-restore.md). The
      backup is restored into a fresh database that replaces the old one
      only once complete: on any failure the old one stays as it was.
      Refused (exit code 1) while bothy serve or any other session uses the
      database, and for a backup of another instance unless
      --allow-other-instance (its instance id replaces this one's, and this
      instance's tokens stop working). Prints {"file", "head_seq",
      "old_epoch", "new_epoch", ...}.

A progress bar goes to stderr when it is a terminal (log lines otherwise).
Tokens are printed on stdout only, once; they never reach the log.
Every flag change appends a flags.updated event; a token revoke appends
token.revoked, a (re)activation principal.deactivated or principal.reactivated.
`

// adminCmd runs a bothy admin subcommand.
func adminCmd(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: admin: missing subcommand (bootstrap, token, principal, demo, flags, backup or restore)", errUsage)
	}
	switch args[0] {
	case "bootstrap":
		return adminBootstrap(ctx, args[1:], environ, stdout, stderr)
	case "token":
		if len(args) > 1 && (args[1] == "list" || args[1] == "revoke") {
			return adminTokens(ctx, args[1], args[2:], environ, stdout, stderr)
		}
		return adminToken(ctx, args[1:], environ, stdout, stderr)
	case "principal":
		return adminPrincipal(ctx, args[1:], environ, stdout, stderr)
	case "demo":
		return adminDemo(ctx, args[1:], environ, stdout, stderr)
	case "flags":
		return adminFlags(ctx, args[1:], environ, stdout, stderr)
	case "backup":
		return adminBackup(ctx, args[1:], environ, stdout, stderr)
	case "restore":
		return adminRestore(ctx, args[1:], environ, stdout, stderr)
	case "help", "-h", "--help":
		_, _ = fmt.Fprint(stdout, adminUsage)
		return errHelp
	}
	return fmt.Errorf("%w: admin: unknown subcommand %q", errUsage, args[0])
}

// ownerFlags name the owner to create.
type ownerFlags struct {
	name, handle, email string
}

// adminBootstrap creates the first owner and prints {principal_id, token}.
func adminBootstrap(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	var o ownerFlags
	configPath, err := flags("admin bootstrap", args, environ, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&o.name, "name", "", "display name of the owner (required)")
		fs.StringVar(&o.handle, "handle", "", "handle of the owner, as in @alex (required)")
		fs.StringVar(&o.email, "email", "", "email address of the owner (required)")
	})
	if err != nil {
		return err
	}
	if o.name == "" || o.handle == "" || o.email == "" {
		return fmt.Errorf("%w: admin bootstrap: --name, --handle and --email are required", errUsage)
	}
	return withApp(ctx, configPath, environ, stderr, func(ctx context.Context, app *wire.App, logger *slog.Logger) error {
		owner, err := bootstrap(ctx, app.Ports(), o.name, o.handle, o.email)
		if errors.Is(err, authz.ErrOwnerExists) {
			return fail(ctx, logger, "bootstrap refused: the instance has an owner already; an owner issues further tokens with bothy admin token --principal ID", err)
		}
		if err != nil {
			return fail(ctx, logger, "bootstrap", err)
		}
		logger.InfoContext(ctx, "created the first owner", "principal_id", owner.PrincipalID.String())
		return writeJSON(stdout, map[string]string{
			"principal_id": owner.PrincipalID.String(),
			"token":        owner.Token.Reveal(),
		})
	})
}

// adminToken issues a token for a principal and prints {token, token_id}.
func adminToken(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	var principal string
	configPath, err := flags("admin token", args, environ, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&principal, "principal", "", "id of the principal the token acts as (required)")
	})
	if err != nil {
		return err
	}
	if principal == "" {
		return fmt.Errorf("%w: admin token: --principal is required", errUsage)
	}
	return withApp(ctx, configPath, environ, stderr, func(ctx context.Context, app *wire.App, logger *slog.Logger) error {
		issued, err := issueToken(ctx, app.Ports(), principal)
		if err != nil {
			return fail(ctx, logger, "issue token", err)
		}
		logger.InfoContext(ctx, "issued a token", "principal_id", issued.PrincipalID.String(), "token_id", issued.TokenID.String())
		return writeJSON(stdout, map[string]string{
			"token":    issued.Token.Reveal(),
			"token_id": issued.TokenID.String(),
		})
	})
}

// adminTokens runs bothy admin token list or revoke.
func adminTokens(ctx context.Context, sub string, args, environ []string, stdout, stderr io.Writer) error {
	var id string
	field := "principal"
	if sub == "revoke" {
		field = "token"
	}
	name := "admin token " + sub
	configPath, err := flags(name, args, environ, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&id, field, "", "id of the "+field+" (required)")
	})
	if err != nil {
		return err
	}
	if id == "" {
		return fmt.Errorf("%w: %s: --%s is required", errUsage, name, field)
	}
	return withApp(ctx, configPath, environ, stderr, func(ctx context.Context, app *wire.App, logger *slog.Logger) error {
		if sub == "list" {
			tokens, err := listTokens(ctx, app.Ports(), id)
			if err != nil {
				return fail(ctx, logger, "list tokens", err)
			}
			return writeJSON(stdout, map[string][]tokenView{"tokens": tokens})
		}
		t, err := revokeToken(ctx, app.Ports(), id)
		if err != nil {
			return fail(ctx, logger, "revoke token", err)
		}
		logger.InfoContext(ctx, "revoked a token", "token_id", t.ID, "principal_id", t.PrincipalID)
		return writeJSON(stdout, t)
	})
}

// adminPrincipal runs bothy admin principal deactivate or reactivate.
func adminPrincipal(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: admin principal: missing subcommand (deactivate or reactivate)", errUsage)
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "deactivate", "reactivate":
	case "help", "-h", "--help":
		_, _ = fmt.Fprint(stdout, adminUsage)
		return errHelp
	default:
		return fmt.Errorf("%w: admin principal: unknown subcommand %q", errUsage, sub)
	}
	var id string
	name := "admin principal " + sub
	configPath, err := flags(name, args, environ, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&id, "principal", "", "id of the principal (required)")
	})
	if err != nil {
		return err
	}
	if id == "" {
		return fmt.Errorf("%w: %s: --principal is required", errUsage, name)
	}
	return withApp(ctx, configPath, environ, stderr, func(ctx context.Context, app *wire.App, logger *slog.Logger) error {
		change := deactivatePrincipal
		if sub == "reactivate" {
			change = reactivatePrincipal
		}
		p, err := change(ctx, app.Ports(), id)
		if err != nil {
			return fail(ctx, logger, sub+" principal", err)
		}
		logger.InfoContext(ctx, sub+"d a principal", "principal_id", p.ID)
		return writeJSON(stdout, p)
	})
}

// adminFlags runs a bothy admin flags subcommand.
func adminFlags(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: admin flags: missing subcommand (list, define, set, clear or delete)", errUsage)
	}
	sub, args := args[0], args[1:]
	var key, description, target, defaultEnabled, enabled string
	define := func(fs *flag.FlagSet) {
		if sub == "list" {
			return
		}
		fs.StringVar(&key, "key", "", "the flag's key (required)")
		switch sub {
		case "define":
			fs.StringVar(&description, "description", "", "what the flag switches, for operators")
			fs.StringVar(&defaultEnabled, "default", "false", "the value for every actor no override targets: true or false")
		case "set", "clear":
			fs.StringVar(&target, "target", "", "kind:person, kind:agent, kind:app or principal:<id> (required)")
			if sub == "set" {
				fs.StringVar(&enabled, "enabled", "", "the flag's value for the target: true or false (required)")
			}
		}
	}
	switch sub {
	case "list", "define", "set", "clear", "delete":
	case "help", "-h", "--help":
		_, _ = fmt.Fprint(stdout, adminUsage)
		return errHelp
	default:
		return fmt.Errorf("%w: admin flags: unknown subcommand %q", errUsage, sub)
	}
	name := "admin flags " + sub
	configPath, err := flags(name, args, environ, stderr, define)
	if err != nil {
		return err
	}
	if sub != "list" && key == "" {
		return fmt.Errorf("%w: %s: --key is required", errUsage, name)
	}
	if (sub == "set" || sub == "clear") && target == "" {
		return fmt.Errorf("%w: %s: --target is required", errUsage, name)
	}
	def, err := parseBool(name, "default", defaultEnabled, sub == "define")
	if err != nil {
		return err
	}
	on, err := parseBool(name, "enabled", enabled, sub == "set")
	if err != nil {
		return err
	}
	return withApp(ctx, configPath, environ, stderr, func(ctx context.Context, app *wire.App, logger *slog.Logger) error {
		var (
			out any
			err error
		)
		switch sub {
		case "list":
			var flags []flagView
			flags, err = listFlags(ctx, app.Ports())
			out = map[string][]flagView{"flags": flags}
		case "define":
			out, err = defineFlag(ctx, app.Ports(), key, description, def)
		case "set":
			out, err = setFlagOverride(ctx, app.Ports(), key, target, on)
		case "clear":
			out, err = clearFlagOverride(ctx, app.Ports(), key, target)
		case "delete":
			err = deleteFlag(ctx, app.Ports(), key)
			out = map[string]string{"deleted": key}
		}
		if err != nil {
			return fail(ctx, logger, name, err)
		}
		return writeJSON(stdout, out)
	})
}

// parseBool reads the value of a true/false flag; used says whether the
// subcommand has the flag (otherwise the value is ignored).
func parseBool(cmd, flagName, value string, used bool) (bool, error) {
	if !used {
		return false, nil
	}
	b, err := strconv.ParseBool(value)
	if err != nil || (value != "true" && value != "false") {
		return false, fmt.Errorf("%w: %s: --%s must be true or false", errUsage, cmd, flagName)
	}
	return b, nil
}

// withApp loads the configuration, starts the database (the embedded default
// when database.url is not set, migrated like bothy serve migrates it),
// wires an App without serving it, runs fn and releases everything.
func withApp(ctx context.Context, configPath string, environ []string, stderr io.Writer,
	fn func(ctx context.Context, app *wire.App, logger *slog.Logger) error,
) error {
	return withDatabase(ctx, configPath, environ, stderr, func(ctx context.Context, cfg *config.Config, logger *slog.Logger, url string) error {
		app, err := wire.New(ctx, cfg, logger, wire.Options{DatabaseURL: url, Migrate: wire.UsesEmbedded(cfg)})
		if err != nil {
			return fail(ctx, logger, "wire", err)
		}
		defer app.Close()
		return fn(ctx, app, logger)
	})
}

// withDatabase loads the configuration, starts the database (the embedded
// default when database.url is not set), runs fn with its URL under a
// context that SIGINT and SIGTERM cancel, and stops the database again: the
// frame every one-shot command (migrate, maintain, admin) shares.
func withDatabase(ctx context.Context, configPath string, environ []string, stderr io.Writer,
	fn func(ctx context.Context, cfg *config.Config, logger *slog.Logger, url string) error,
) error {
	return withDatabaseVia(ctx, wire.Database, configPath, environ, stderr, fn)
}

// withDatabaseVia is withDatabase with the function that starts the database (wire.Database, or
// wire.DatabaseExclusive for a restore).
func withDatabaseVia(ctx context.Context,
	database func(context.Context, *config.Config, *slog.Logger) (string, func(context.Context) error, error),
	configPath string, environ []string, stderr io.Writer,
	fn func(ctx context.Context, cfg *config.Config, logger *slog.Logger, url string) error,
) (err error) {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cfg, logger, err := setup(ctx, configPath, environ, stderr)
	if err != nil {
		return err
	}
	url, stopDB, err := database(ctx, cfg, logger)
	if err != nil {
		return fail(ctx, logger, "start database", err)
	}
	defer func() {
		if serr := stopDB(context.WithoutCancel(ctx)); serr != nil && err == nil {
			err = fail(ctx, logger, "stop database", serr)
		}
	}()
	return fn(ctx, cfg, logger, url)
}

// announceOwner prints, on stdout only, the owner --bootstrap-owner created,
// their token (shown this once) and, when the process serves HTTP at base, a
// first curl command. Nothing of it goes to the log.
func announceOwner(stdout io.Writer, who ownerFlags, owner owner, base string) {
	token := owner.Token.Reveal()
	_, _ = fmt.Fprintf(stdout, "bothy: created the first owner of this instance: %s (@%s, %s), principal %s.\n",
		who.name, who.handle, who.email, owner.PrincipalID)
	_, _ = fmt.Fprintf(stdout, "Their token is shown this once (the server keeps only its hash):\n\n  %s\n\n", token)
	if base != "" {
		_, _ = fmt.Fprintf(stdout, "Try it:\n\n  curl -H \"Authorization: Bearer %s\" %s/api/v1/me\n\n", token, base)
	}
}

// curlHost is the host:port to put in a curl command for a listener's
// address: a listener on every interface (":8080") is reached on loopback.
func curlHost(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
