// Package pglocal runs a PostgreSQL cluster from the machine's own binaries, so that bothy works
// on a fresh machine without a database server to set up (the embedded default) and tests get a
// throwaway server without Docker.
//
// The server listens on 127.0.0.1 only and has no unix socket. When the process is root, initdb,
// pg_ctl and postgres run as the unprivileged `postgres` system user (or `nobody`), because
// PostgreSQL refuses to run as root. Every child runs in its own process group, so a Ctrl-C on
// the terminal reaches bothy alone, which then stops the server in order.
package pglocal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultSuperuser is the superuser that initdb creates when Options.Superuser is empty; the
// embedded default connects as this role.
const DefaultSuperuser = "bothy"

// DefaultDatabase is the database Start creates when Options.Database is empty; the embedded
// default keeps bothy's schemas in it.
const DefaultDatabase = "bothy"

// ErrInUse is returned by Start with Options.Exclusive when another live process owns the
// cluster (a bothy serve on the same directory).
var ErrInUse = errors.New("the cluster is in use by another process")

// ErrNotInstalled is returned by Start when the PostgreSQL server binaries cannot be found; its
// text tells the operator how to install them.
var ErrNotInstalled = errors.New("postgresql server binaries (initdb, pg_ctl, postgres) not found on PATH or in " +
	libGlob + ": apt-get install postgresql")

const (
	// libGlob is where Debian's postgresql packages put the server binaries, which are not on
	// PATH there.
	libGlob = "/usr/lib/postgresql/*/bin"
	// portAttempts is how often Start picks a new free port when the one it picked was taken
	// between probing and binding.
	portAttempts = 3
)

var (
	identRe     = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)
	settingRe   = regexp.MustCompile(`^[a-z_][a-z0-9_.]*$`)
	portTakenRe = regexp.MustCompile(`(?i)address already in use|could not bind`)
)

// Options describes the cluster to start. The zero value of every field but Dir is usable.
type Options struct {
	// Dir is the data directory; it is created when missing. Its parent holds the password
	// file and the server log unless PasswordFile or LogFile say otherwise, and must be
	// traversable by the server account.
	Dir string
	// Port is the TCP port on 127.0.0.1; 0 picks a free one on every start.
	Port int
	// Fsync keeps PostgreSQL's durability settings; false turns off fsync, full-page writes
	// and synchronous commit (tests only: a crash may corrupt the cluster).
	Fsync bool
	// Trust lets any local connection in without a password (tests only); otherwise the
	// superuser gets a generated password and scram-sha-256 authentication.
	Trust bool
	// Logger receives lifecycle messages; nil discards them.
	Logger *slog.Logger
	// Superuser is the role initdb creates; empty means DefaultSuperuser.
	Superuser string
	// Database is created, owned by the superuser, when it does not exist; empty means
	// DefaultDatabase.
	Database string
	// PasswordFile keeps the superuser password (mode 0600); empty means "password" next to Dir.
	PasswordFile string
	// LogFile receives the server's output; empty means "postgres.log" next to Dir.
	LogFile string
	// Settings are extra server settings passed as -c name=value on every start.
	Settings map[string]string
	// Exclusive refuses to share the cluster: when another live process owns it, Start fails
	// with ErrInUse instead of attaching, and the owner never publishes its postmaster, so a
	// process that starts meanwhile waits for this one to stop instead of attaching to it
	// (bothy admin restore, which must be the cluster's only user).
	Exclusive bool
	// Timeouts bounds the waits of starting and stopping (embedded.* keys); a zero field
	// takes its key's default.
	Timeouts Timeouts
}

// Cluster is a running PostgreSQL server started by Start: either owned (this process started
// the server and Stop shuts it down) or attached (another live process owns the server and Stop
// leaves it running).
type Cluster struct {
	dir      string
	port     int
	user     string
	password string
	bins     binaries
	acct     *account
	logger   *slog.Logger
	timeouts Timeouts // with every default filled in

	cmd     *exec.Cmd
	pid     int
	exited  chan struct{} // closed when the postmaster has exited and been reaped
	waitErr error         // the postmaster's exit status, valid once exited is closed

	lock     *os.File // the held owner lock while this process owns the server
	attached bool     // the server belongs to another process; Stop leaves it alone

	stopMu sync.Mutex
}

// Start brings up the cluster described by o and returns once it accepts connections.
//
// The process that starts the server owns it: it holds an exclusive flock on owner.lock next to
// Dir until Stop, and the kernel releases the lock when the process dies. When another live
// process owns the cluster, Start starts nothing and stops nothing: it waits, within ctx, until
// that server accepts connections and returns a Cluster attached to it (same port, superuser and
// password file; its Stop leaves the server running). This lets bothy admin and bothy migrate
// run beside a running bothy serve on the same embedded directory.
//
// An owner initializes Dir on first use (no PG_VERSION) with initdb; later starts reuse the
// data. A server left behind by a killed owner (a postmaster.pid in Dir while nobody holds the
// lock) is stopped, or its stale pid file removed, before the new server starts. The error
// wraps ErrNotInstalled when the binaries are missing and names the directory when the server
// account cannot reach Dir.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	o, err := withDefaults(o)
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeouts.Start)
		defer cancel()
	}
	bins, err := findBinaries(os.Getenv("PATH"), libGlob)
	if err != nil {
		return nil, fmt.Errorf("pglocal: %w", err)
	}
	acct, err := serverAccount()
	if err != nil {
		return nil, fmt.Errorf("pglocal: %w", err)
	}
	c := &Cluster{dir: o.Dir, user: o.Superuser, bins: bins, acct: acct, logger: o.Logger, timeouts: o.Timeouts}
	if err := c.prepareDirs(); err != nil {
		return nil, fmt.Errorf("pglocal: %w", err)
	}
	if err := c.claim(ctx, o.Exclusive); err != nil {
		return nil, fmt.Errorf("pglocal: %w", err)
	}
	if c.attached {
		if err := c.attach(ctx, o); err != nil {
			return nil, fmt.Errorf("pglocal: %w", err)
		}
		return c, nil
	}
	if err := c.startOwned(ctx, o); err != nil {
		_ = c.releaseLock()
		return nil, fmt.Errorf("pglocal: %w", err)
	}
	return c, nil
}

// startOwned initializes or loads the cluster, clears leftovers, starts the server, creates
// the database and publishes the postmaster's pid for attaching processes.
func (c *Cluster) startOwned(ctx context.Context, o Options) error {
	if err := c.initOrLoad(ctx, o); err != nil {
		return err
	}
	if err := c.clearLeftovers(ctx); err != nil {
		return err
	}
	if err := c.startServer(ctx, o); err != nil {
		return err
	}
	if err := c.ensureDatabase(ctx, o.Database); err != nil {
		_ = c.stopServer(context.WithoutCancel(ctx))
		return err
	}
	if o.Exclusive {
		return nil
	}
	if err := c.publish(c.pid); err != nil {
		_ = c.stopServer(context.WithoutCancel(ctx))
		return err
	}
	return nil
}

// attach completes a Cluster attached to the server of another process: the owner created the
// data directory and the password file before its server came up.
func (c *Cluster) attach(ctx context.Context, o Options) error {
	if err := c.initOrLoad(ctx, o); err != nil {
		return err
	}
	return c.ensureDatabase(ctx, o.Database)
}

func withDefaults(o Options) (Options, error) {
	if o.Dir == "" {
		return o, errors.New("pglocal: options: dir is required")
	}
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return o, fmt.Errorf("pglocal: options: dir: %w", err)
	}
	o.Dir = abs
	o.Timeouts = o.Timeouts.withDefaults()
	if err := o.Timeouts.Validate(); err != nil {
		return o, err
	}
	if o.Superuser == "" {
		o.Superuser = DefaultSuperuser
	}
	if o.Database == "" {
		o.Database = DefaultDatabase
	}
	if !identRe.MatchString(o.Superuser) {
		return o, fmt.Errorf("pglocal: options: superuser %q is not a plain lowercase identifier", o.Superuser)
	}
	if !identRe.MatchString(o.Database) {
		return o, fmt.Errorf("pglocal: options: database %q is not a plain lowercase identifier", o.Database)
	}
	for k := range o.Settings {
		if !settingRe.MatchString(k) {
			return o, fmt.Errorf("pglocal: options: setting name %q is malformed", k)
		}
	}
	if o.PasswordFile == "" {
		o.PasswordFile = filepath.Join(filepath.Dir(o.Dir), "password")
	}
	if o.LogFile == "" {
		o.LogFile = filepath.Join(filepath.Dir(o.Dir), "postgres.log")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// prepareDirs creates the data directory for the server account and checks that the account
// can reach it.
func (c *Cluster) prepareDirs() error {
	parent := filepath.Dir(c.dir)
	//nolint:gosec // G301: the server account must traverse it; secrets in it are 0600 files.
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", parent, err)
	}
	if resolved, err := filepath.EvalSymlinks(parent); err == nil {
		c.dir = filepath.Join(resolved, filepath.Base(c.dir))
	}
	if c.acct != nil {
		if err := checkTraversable(c.dir, c.acct.name, c.acct.uid, c.acct.gid); err != nil {
			return err
		}
	}
	if err := os.Mkdir(c.dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create data dir: %w", err)
	}
	if c.acct != nil {
		if err := os.Chown(c.dir, int(c.acct.uid), int(c.acct.gid)); err != nil {
			return fmt.Errorf("chown data dir: %w", err)
		}
	}
	return nil
}

// initOrLoad runs initdb on an empty data directory, or loads the password of an existing one.
func (c *Cluster) initOrLoad(ctx context.Context, o Options) error {
	_, err := os.Stat(filepath.Join(c.dir, "PG_VERSION"))
	switch {
	case err == nil:
		if o.Trust {
			return nil
		}
		pw, err := os.ReadFile(o.PasswordFile)
		if err != nil {
			return fmt.Errorf("read password of existing cluster: %w", err)
		}
		c.password = string(trimNewline(pw))
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("stat PG_VERSION: %w", err)
	}
	return c.initdb(ctx, o)
}

func (c *Cluster) initdb(ctx context.Context, o Options) error {
	args := []string{"-D", c.dir, "-U", o.Superuser, "--encoding=UTF8", "--locale=C.UTF-8", "--no-instructions"}
	if !o.Fsync {
		args = append(args, "--no-sync")
	}
	if o.Trust {
		args = append(args, "--auth=trust")
	} else {
		pw, err := randomPassword()
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.PasswordFile, []byte(pw+"\n"), 0o600); err != nil {
			return fmt.Errorf("write password file: %w", err)
		}
		// initdb runs as the server account and cannot read the 0600 file of the bothy user:
		// hand it a copy that lives only as long as initdb.
		tmp, err := c.writeTempPassword(pw)
		if err != nil {
			return err
		}
		defer func() { _ = os.Remove(tmp) }()
		args = append(args, "--auth=scram-sha-256", "--pwfile="+tmp)
		c.password = pw
	}
	c.logger.InfoContext(ctx, "initializing postgresql cluster", "dir", c.dir)
	out, err := c.command(ctx, c.bins.initdb, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("initdb: %w: %s", err, tail(out))
	}
	return nil
}

func (c *Cluster) writeTempPassword(pw string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(c.dir), ".initdb-pw-")
	if err != nil {
		return "", fmt.Errorf("create initdb password file: %w", err)
	}
	name := f.Name()
	_, werr := f.WriteString(pw + "\n")
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(name)
		return "", fmt.Errorf("write initdb password file: %w", err)
	}
	if c.acct != nil {
		if err := os.Chown(name, int(c.acct.uid), int(c.acct.gid)); err != nil {
			_ = os.Remove(name)
			return "", fmt.Errorf("chown initdb password file: %w", err)
		}
	}
	return name, nil
}

// startServer runs postgres as a child and waits until its pid file says it is ready. With a
// random port it retries when another process took the port first.
func (c *Cluster) startServer(ctx context.Context, o Options) error {
	logFile, err := os.OpenFile(o.LogFile, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open server log: %w", err)
	}
	// The child keeps its own copy of the descriptor.
	defer func() { _ = logFile.Close() }()
	for attempt := 1; ; attempt++ {
		port := o.Port
		if port == 0 {
			if port, err = freePort(ctx); err != nil {
				return err
			}
		}
		offset, _ := logFile.Seek(0, io.SeekEnd)
		err = c.runPostgres(ctx, o, port, logFile)
		if err == nil {
			c.logger.InfoContext(ctx, "postgresql started", "dir", c.dir, "port", port, "pid", c.pid)
			return nil
		}
		logTail := readFrom(logFile, offset)
		if o.Port != 0 || attempt == portAttempts || !portTaken(logTail) {
			return fmt.Errorf("start postgres: %w: %s", err, tail(logTail))
		}
	}
}

func (c *Cluster) runPostgres(ctx context.Context, o Options, port int, logFile *os.File) error {
	args := []string{"-D", c.dir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="}
	if !o.Fsync {
		args = append(args, "-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=off")
	}
	keys := make([]string, 0, len(o.Settings))
	for k := range o.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-c", k+"="+o.Settings[k])
	}
	// Not CommandContext: the server must outlive the start call; ctx only bounds the wait.
	cmd := c.command(context.WithoutCancel(ctx), c.bins.postgres, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("exec postgres: %w", err)
	}
	exited := make(chan struct{})
	c.cmd, c.pid, c.port, c.exited = cmd, cmd.Process.Pid, port, exited
	go func() {
		c.waitErr = cmd.Wait()
		close(exited)
	}()
	err := c.poll(ctx, func() (bool, error) {
		select {
		case <-exited:
			return false, fmt.Errorf("postgres exited: %w", c.waitErr)
		default:
		}
		pf, err := readPidFile(c.dir)
		return err == nil && pf.pid == c.pid && pf.ready, nil
	})
	if err != nil {
		c.kill()
		return err
	}
	return nil
}

// kill ends a postmaster that failed to come up and reaps it.
func (c *Cluster) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-c.exited:
		return
	case <-time.After(c.timeouts.Stop):
	}
	_ = c.cmd.Process.Kill()
	<-c.exited
}

func (c *Cluster) ensureDatabase(ctx context.Context, name string) error {
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("look up database %s: %w", name, err)
	}
	if exists {
		return nil
	}
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " OWNER " + pgx.Identifier{c.user}.Sanitize()
	if _, err := conn.Exec(ctx, sql); err != nil {
		// An attached process may create it at the same time as another.
		if e := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_database WHERE datname = $1)", name).Scan(&exists); e == nil && exists {
			return nil
		}
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// URL is the connection URL of database on this cluster, with the superuser's credentials.
func (c *Cluster) URL(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	if c.password != "" {
		u.User = url.UserPassword(c.user, c.password)
	} else {
		u.User = url.User(c.user)
	}
	return u.String()
}

// Port is the TCP port the server listens on at 127.0.0.1.
func (c *Cluster) Port() int { return c.port }

// PID is the postmaster's process id, so that callers can prove it is gone after Stop. An
// attached Cluster reports the owner's postmaster.
func (c *Cluster) PID() int { return c.pid }

// Dir is the absolute data directory, the working directory of every server process.
func (c *Cluster) Dir() string { return c.dir }

// Stop shuts the server down (fast shutdown: open sessions are ended, data is kept) and
// returns once the postmaster and its children are gone; then it releases the owner lock.
// When ctx ends first it falls back to an immediate shutdown. Stopping a stopped cluster is a
// no-op. Stop of an attached Cluster leaves the owner's server running and only forgets it.
func (c *Cluster) Stop(ctx context.Context) error {
	c.stopMu.Lock()
	defer c.stopMu.Unlock()
	if c.attached {
		return nil
	}
	if c.lock != nil {
		// Processes starting now wait for the lock instead of attaching to a stopping server.
		_ = c.publish(0)
	}
	err := c.stopServer(ctx)
	return errors.Join(err, c.releaseLock())
}

// stopServer is Stop without the owner lock; the caller holds stopMu or is Start.
func (c *Cluster) stopServer(ctx context.Context) error {
	select {
	case <-c.exited:
		return nil
	default:
	}
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		return fmt.Errorf("pglocal: stop: %w", err)
	}
	timer := time.NewTimer(c.timeouts.Stop)
	defer timer.Stop()
	var stopErr error
	select {
	case <-c.exited:
	case <-ctx.Done():
		stopErr = fmt.Errorf("pglocal: stop: %w", ctx.Err())
		c.kill()
	case <-timer.C:
		stopErr = errors.New("pglocal: stop: fast shutdown timed out, used immediate shutdown")
		c.kill()
	}
	c.logger.InfoContext(ctx, "postgresql stopped", "dir", c.dir, "pid", c.pid)
	if err := c.waitNoProcesses(context.WithoutCancel(ctx)); err != nil {
		return errors.Join(stopErr, fmt.Errorf("pglocal: stop: %w", err))
	}
	return stopErr
}

// command builds a child process that runs as the server account in its own process group,
// with a working directory the account can enter and no PG* variables that could redirect it.
func (c *Cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	//nolint:gosec // G204: name is one of the PostgreSQL binaries found by findBinaries.
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = filepath.Dir(c.dir)
	cmd.Env = serverEnv(os.Environ())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if c.acct != nil {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: c.acct.uid, Gid: c.acct.gid, NoSetGroups: true}
	}
	return cmd
}

func serverEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		if len(kv) >= 2 && kv[:2] == "PG" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func freePort(ctx context.Context) (int, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("pick free port: %w", err)
	}
	return port, nil
}

func portTaken(logTail []byte) bool {
	return portTakenRe.Match(logTail)
}

// poll calls cond every embedded.poll_interval until it reports done, fails, or ctx ends.
func (c *Cluster) poll(ctx context.Context, cond func() (bool, error)) error {
	tick := time.NewTicker(c.timeouts.Poll)
	defer tick.Stop()
	for {
		done, err := cond()
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
