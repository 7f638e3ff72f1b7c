// Package wire is bothy's composition root: the one place that reads the
// configuration, builds every module once, binds ports to adapters, mounts
// the generated strict server on chi and runs the process roles. No DI
// framework: New is plain code that reads top to bottom in dependency order.
package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	gosync "sync"
	"time"

	"bothy.example.com/server/internal/webui"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	agentspg "bothy.example.com/server/internal/agents/adapters/postgres"
	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/apivalidate"
	authzpg "bothy.example.com/server/internal/authz/adapters/postgres"
	chatpg "bothy.example.com/server/internal/chat/adapters/postgres"
	identityhttp "bothy.example.com/server/internal/identity/adapters/httpapi"
	identitypg "bothy.example.com/server/internal/identity/adapters/postgres"
	ingestpg "bothy.example.com/server/internal/ingest/adapters/postgres"
	"bothy.example.com/server/internal/instance"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/httpmw"
	"bothy.example.com/server/internal/kernel/migrate"
	"bothy.example.com/server/internal/kernel/pgxuuid"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/ops"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	syncapp "bothy.example.com/server/internal/sync/app"
	syncdomain "bothy.example.com/server/internal/sync/domain"
)

// The roles a process can serve (bothy serve --roles).
const (
	// RoleAPI serves the HTTP API and the operational endpoints.
	RoleAPI = "api"
	// RoleGateway serves the WebSocket gateway (GET /api/v1/gateway) and the
	// operational endpoints on the same listener as the api role, and runs the
	// process's log tail, which feeds the gateway's live events. Several
	// processes may run it: each runs its own tail over the shared database.
	RoleGateway = "gateway"
	// RoleMaintenance runs the event log's partition upkeep every
	// sync.maintenance_interval, the agent presence sweeper every
	// agents.presence_sweep_interval and the invocation sweeper every
	// agents.invocation_sweep_interval. Several processes may run it: upkeep
	// runs serialize in the database, sweeps skip the rows another holds.
	RoleMaintenance = "maintenance"
)

// Roles lists every role a process can take, in the order they start.
func Roles() []string {
	return []string{RoleAPI, RoleGateway, RoleMaintenance}
}

// Migrations returns the migration sets of every module in the module
// register's order (architecture/modules.yaml), the order migrate.Apply
// applies them in, so a module's tables exist before a later module's
// migration refers to them. Each module's issue appends its set here.
func Migrations() []migrate.Set {
	return []migrate.Set{
		instancepg.Migrations(),
		identitypg.Migrations(),
		authzpg.Migrations(),
		agentspg.Migrations(),
		chatpg.Migrations(),
		syncpg.Migrations(),
		ingestpg.Migrations(),
	}
}

// Options are what a caller of New chooses beyond the configuration. The
// zero value is the production setup.
type Options struct {
	// Roles the process serves; empty means every role (see Roles). An
	// unknown role is an error.
	Roles []string
	// DatabaseURL overrides the database.url key, for the URL Database
	// returns when it started the embedded default. Empty means the key.
	DatabaseURL string
	// Migrate applies Migrations before serving, creates the instance when
	// it is missing and runs one partition upkeep, as bothy migrate does.
	// bothy serve sets it for the embedded default, which has no operator to
	// run bothy migrate.
	Migrate bool
	// Clock is the time source of every module; nil means clock.System().
	// Tests pass a clock.Fake.
	Clock clock.Clock
	// Mount, when set, adds routes to the router after the API's. It exists
	// for tests that need a route the API lacks (a handler that panics, to
	// check the recovery path); production leaves it nil.
	Mount func(r chi.Router)
}

// App is one wired bothy process: its database pool, its modules, its HTTP
// handler and the settings to serve its roles. Build it with New, run it
// with Serve, release it with Close.
type App struct {
	logger            *slog.Logger
	clock             clock.Clock
	roles             []string
	pool              *pgxpool.Pool
	tx                *tx.Runner
	registry          *prometheus.Registry
	handler           http.Handler
	addr              string
	readHeaderTimeout time.Duration
	shutdownTimeout   time.Duration
	gateway           *gateway.Gateway // nil without the gateway role
	limits            *limits
	eventLog
	modules
}

// New wires a process from cfg. It reads every configuration key the
// process uses, connects the pool (lazily: a database that is down at start
// makes /readyz answer 503 until it is back, it does not stop the process),
// builds the modules, applies migrations and sets the database up when
// opts.Migrate is set, and builds the router. The log tail is built, not
// started (see Tail). It fails on a bad configuration value, an unknown key
// set in the file or the environment (config.Err), an unknown role, an
// unusable database URL, or a failed migration or setup; nothing is left
// open when it fails.
func New(ctx context.Context, cfg *config.Config, logger *slog.Logger, opts Options) (*App, error) {
	if err := checkRoles(opts.Roles); err != nil {
		return nil, err
	}
	s := readSettings(cfg, opts.DatabaseURL)
	// Every key is read by now: report all bad values and typos at once.
	if err := cfg.Err(); err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	a := &App{
		logger:            logger,
		clock:             opts.Clock,
		roles:             opts.Roles,
		addr:              s.addr,
		readHeaderTimeout: s.readHeaderTimeout,
		shutdownTimeout:   s.shutdownTimeout,
	}
	if len(a.roles) == 0 {
		a.roles = Roles()
	}
	if a.clock == nil {
		a.clock = clock.System()
	}
	doc, err := apigen.GetSpec()
	if err != nil {
		return nil, fmt.Errorf("wire: the embedded OpenAPI document: %w", err)
	}
	public, err := publicRoutes(doc)
	if err != nil {
		return nil, err
	}
	checks, err := apivalidate.New(doc)
	if err != nil {
		return nil, err
	}
	pool, err := NewPool(ctx, s.dbURL, s.maxConns)
	if err != nil {
		return nil, err
	}
	a.pool = pool
	if err := a.build(ctx, s, opts); err != nil {
		pool.Close()
		return nil, err
	}
	if a.handler, err = a.router(s, opts, public, checks); err != nil {
		pool.Close()
		return nil, err
	}
	return a, nil
}

// build builds what serves on the pool: the transaction runner, the event log, the
// migrations and the instance's setup when opts.Migrate asks, the metrics registry, the rate
// limits, every module (buildModules) and, with the gateway role, the gateway.
func (a *App) build(ctx context.Context, s settings, opts Options) error {
	var err error
	if a.tx, err = tx.NewRunner(a.pool).WithRollbackTimeout(s.rollbackTimeout); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if a.eventLog, err = newEventLog(a.pool, a.tx, a.clock, a.logger, s.log, s.sync); err != nil {
		return err
	}
	if opts.Migrate {
		n, err := migrate.Apply(ctx, a.pool, Migrations())
		if err != nil {
			return fmt.Errorf("apply migrations: %w", err)
		}
		a.logger.InfoContext(ctx, "migrations applied", "applied", n)
		if err := a.setUp(ctx, s.log.instanceName, a.logger); err != nil {
			return err
		}
	}
	a.registry = prometheus.NewRegistry()
	if err := a.registry.Register(collectors.NewGoCollector()); err != nil {
		return fmt.Errorf("register go collector: %w", err)
	}
	if err := a.registry.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return fmt.Errorf("register process collector: %w", err)
	}
	if a.limits, err = newLimits(s.limits, a.clock, a.registry); err != nil {
		return err
	}
	b := base{runner: a.tx, log: a.eventLog, clock: a.clock, logger: a.logger, registry: a.registry}
	if a.modules, err = buildModules(b, s); err != nil {
		return err
	}
	if slices.Contains(a.roles, RoleGateway) {
		if a.gateway, err = newGateway(a.modules, a.eventLog, a.limits, a.clock, a.logger, s.gateway); err != nil {
			return err
		}
	}
	return nil
}

// router builds the process's HTTP handler: the operational endpoints, the one strict server
// over every module's handlers, and the middleware of the edge (router.go), with the web
// client for the api role.
func (a *App) router(s settings, opts Options, public map[route]struct{}, checks apivalidate.Checks) (http.Handler, error) {
	httpMetrics, err := ops.NewHTTPMetrics(a.registry)
	if err != nil {
		return nil, err
	}
	opsServer, err := ops.New(ops.Deps{
		Readiness:        readiness{pool: a.pool, sets: Migrations()},
		Gatherer:         a.registry,
		ReadinessTimeout: s.readinessTimeout,
		Logger:           a.logger,
	})
	if err != nil {
		return nil, fmt.Errorf("ops: %w", err)
	}
	h := a.handlers
	deps := routerDeps{
		logger:       a.logger,
		maxBodyBytes: s.maxBody,
		retryAfter:   s.retryAfter,
		metrics:      httpMetrics,
		server: &server{
			Server: opsServer, identityServer: h.identity, authzServer: h.authz, agentsServer: h.agents,
			instanceServer: h.instance, chatServer: h.chat, personalServer: h.personal,
		},
		authenticate: authenticateOperations(public, withVersionRead(identityhttp.Authenticate(a.identity))),
		idempotency:  a.idempotent(a.tx, a.clock),
		validate:     checks.Middleware(),
		compress:     httpmw.Compress(int(s.compressMin)),
		cors:         httpmw.CORS(s.cors),
		mount:        opts.Mount,
		gateway:      a.gatewayHandler(),
		perAddress:   a.limits.perAddress(public),
		perToken:     a.limits.perToken(),
	}
	if !slices.Contains(a.roles, RoleAPI) {
		deps.operationsOnly = operationsOnly(public)
	} else if deps.web, err = webui.New(s.webDir); err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	} else {
		a.logger.Info("web client", "source", deps.web.Source)
	}
	return newRouter(deps), nil
}

// checkRoles rejects roles that do not exist, so `--roles gatway` fails
// loudly instead of starting a process that serves nothing.
func checkRoles(roles []string) error {
	for _, r := range roles {
		if !slices.Contains(Roles(), r) {
			return fmt.Errorf("wire: unknown role %q (known: %v)", r, Roles())
		}
	}
	return nil
}

// NewPool opens a pgx pool on url with at most maxConns connections. Every
// connection gets search_path pg_catalog, so a query that names a table
// without its module's schema fails instead of finding some other table, and
// a type map that encodes and scans uuid.UUID directly (kernel/pgxuuid).
func NewPool(ctx context.Context, url string, maxConns int) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The URL may hold a password: do not repeat it.
		return nil, errors.New("database.url is not a valid PostgreSQL URL")
	}
	if maxConns < 1 {
		return nil, fmt.Errorf("database.max_conns is %d, want at least 1", maxConns)
	}
	pc.MaxConns = int32(min(maxConns, 1<<30))
	pc.ConnConfig.RuntimeParams["search_path"] = "pg_catalog"
	pc.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		pgxuuid.Register(conn.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("open database pool: %w", err)
	}
	return pool, nil
}

// Handler returns the process's HTTP handler: middleware, the API routes and
// the problem responses for unknown paths and methods.
func (a *App) Handler() http.Handler {
	return a.handler
}

// Pool returns the database pool, for integration tests that seed or
// inspect rows through the same connections the App uses.
func (a *App) Pool() *pgxpool.Pool {
	return a.pool
}

// Tx returns the transaction runner every module's use cases share.
func (a *App) Tx() *tx.Runner {
	return a.tx
}

// Clock returns the time source the modules use (a clock.Fake in tests).
func (a *App) Clock() clock.Clock {
	return a.clock
}

// Appender returns the event appender every writing module is given: it
// stages events in the caller's transaction (tx.Runner.RunInTx) and writes
// them in the commit phase.
func (a *App) Appender() kernel.Appender {
	return a.appender
}

// Versions returns the lock-free reads of the instance's counters and epoch.
func (a *App) Versions() instance.Versions {
	return a.instance
}

// FlushTokenUse writes the last-use times of the tokens this process
// authenticated since the previous flush, in one statement. The api role
// does it every identity.last_used_flush_interval and once more when it
// stops; tests call it to look at the times without waiting.
func (a *App) FlushTokenUse(ctx context.Context) error {
	return a.identity.Flush(ctx)
}

// Tail returns the process's one log tail, built but not started: the
// gateway role (and tests and the benchmark) run it with Tail().Run(ctx)
// and subscribe with Subscribe. Run may be called once.
func (a *App) Tail() *syncapp.Tail {
	return a.tail
}

// EventsAfter returns at most limit events of the log with a seq above
// after, in seq order, as stored (a redacted event's payload reduced to its
// ids), through the sync module's reader. It is how integration tests check
// what an operation appended: no package outside sync may name sync's
// tables in SQL (make register-check). Errors as syncpg.Reader.EventsAfter.
func (a *App) EventsAfter(ctx context.Context, after int64, limit int) ([]syncdomain.StoredEvent, error) {
	return syncpg.NewReader(a.tx).EventsAfter(ctx, after, limit)
}

// Maintain runs one partition upkeep of the event log at the App's clock's
// time and returns its report; bothy maintain prints it.
func (a *App) Maintain(ctx context.Context) (syncmod.UpkeepReport, error) {
	return a.maintenance.Maintain(ctx)
}

// Serve runs the process's roles until ctx is cancelled: with the api or the
// gateway role it listens on http.addr, serves HTTP (the API, the gateway
// route, or both, and the operational endpoints) and writes the tokens'
// last-use times every identity.last_used_flush_interval; with the gateway
// role it runs the log tail; with the maintenance role it runs partition
// upkeep every sync.maintenance_interval. On cancellation the gateway closes
// its WebSockets with 1001 after their in-flight frames, then HTTP drains
// (it stops accepting, waits for in-flight requests), both within
// http.shutdown_timeout; the last-use times are flushed once more, the tail
// and maintenance stop; Serve returns nil after a clean stop. It returns an
// error when it cannot listen, when the server fails, or when the drain
// timed out (the remaining connections are closed).
func (a *App) Serve(ctx context.Context) error {
	if !a.ServesHTTP() {
		return a.serve(ctx, nil)
	}
	ln, err := a.Listen(ctx)
	if err != nil {
		return err
	}
	return a.serve(ctx, ln)
}

// ServesHTTP reports whether the process has a role that serves HTTP: api or
// gateway (both on the one listener of http.addr).
func (a *App) ServesHTTP() bool {
	return slices.Contains(a.roles, RoleAPI) || slices.Contains(a.roles, RoleGateway)
}

// Listen opens the listener on http.addr that Serve would open, for a caller
// that must know the address before serving (bothy serve prints a first
// curl command with it) and then passes it to ServeListener.
func (a *App) Listen(ctx context.Context) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", a.addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", a.addr, err)
	}
	return ln, nil
}

// ServeListener is Serve with HTTP on a listener the caller opened (tests
// listen on 127.0.0.1:0 and read the port back). It closes ln.
func (a *App) ServeListener(ctx context.Context, ln net.Listener) error {
	return a.serve(ctx, ln)
}

// serve runs the maintenance role (when chosen) beside HTTP on ln (nil: no
// HTTP) until ctx ends, and stops both before it returns.
func (a *App) serve(ctx context.Context, ln net.Listener) error {
	var wg gosync.WaitGroup
	roleCtx, stopRoles := context.WithCancel(ctx)
	// The gateway's log tail outlives ctx until the gateway has closed its
	// connections (serveHTTP), so that events committed before the signal
	// still reach them.
	tailCtx, stopTail := context.WithCancel(context.WithoutCancel(ctx))
	defer func() {
		stopRoles()
		stopTail()
		wg.Wait()
	}()
	if a.gateway != nil {
		wg.Go(func() {
			if err := a.tail.Run(tailCtx); err != nil {
				a.logger.ErrorContext(tailCtx, "log tail stopped", "error", err.Error())
			}
		})
	}
	if slices.Contains(a.roles, RoleMaintenance) {
		wg.Go(func() {
			// Run fails only for an interval New has already checked.
			_ = a.maintenance.Run(roleCtx, a.maintenanceInterval)
		})
		wg.Go(func() { a.runPresenceSweeper(roleCtx) })
		wg.Go(func() { a.runInvocationSweeper(roleCtx) })
	}
	if ln == nil {
		a.logger.InfoContext(ctx, "serving without http", "roles", a.roles)
		<-ctx.Done()
		return nil
	}
	// The tokens' last-use times are written while HTTP serves and once more
	// after it drained: the loop stops only when serveHTTP returned, so the
	// requests that finished during the drain are in its final flush.
	flushCtx, stopFlush := context.WithCancel(context.WithoutCancel(ctx))
	var flush gosync.WaitGroup
	flush.Go(func() {
		// Run returns nil; a failed flush is logged and retried by it.
		_ = a.identity.Run(flushCtx)
	})
	err := a.serveHTTP(ctx, ln)
	stopFlush()
	flush.Wait()
	return err
}

// serveHTTP serves the handler on ln until ctx ends, then drains.
func (a *App) serveHTTP(ctx context.Context, ln net.Listener) error {
	// The timeouts of ADR 0019. net/http clears the read deadline once a
	// body was read (its background read starts) and both deadlines when the
	// gateway hijacks a connection, so a long handler keeps its context and a
	// WebSocket outlives them. The listener caps the open connections.
	srv := &http.Server{
		Handler:           a.handler,
		ReadHeaderTimeout: a.readHeaderTimeout,
		ReadTimeout:       a.limits.cfg.read,
		WriteTimeout:      a.limits.cfg.write,
		IdleTimeout:       a.limits.cfg.idle,
		ErrorLog:          slog.NewLogLogger(a.logger.Handler(), slog.LevelWarn),
	}
	a.logger.InfoContext(ctx, "serving http", "addr", ln.Addr().String())
	ln = a.limits.listener(ln, a.readHeaderTimeout)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()

	select {
	case err := <-done:
		return fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
	}
	a.logger.InfoContext(ctx, "draining http", "timeout", a.shutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.shutdownTimeout)
	defer cancel()
	// WebSockets first: http.Server.Shutdown does not track upgraded
	// connections. New upgrades are refused with 503 from here on.
	gatewayErr := a.shutdownGateway(sctx)
	shutdownErr := errors.Join(gatewayErr, srv.Shutdown(sctx))
	if shutdownErr != nil {
		_ = srv.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve http: %w", err)
	}
	if shutdownErr != nil {
		return fmt.Errorf("drain http: %w", shutdownErr)
	}
	a.logger.InfoContext(ctx, "http drained")
	return nil
}

// Close releases the App's resources (the database pool). Call it after
// Serve returned; it waits for connections in use to be released.
func (a *App) Close() {
	a.pool.Close()
}
