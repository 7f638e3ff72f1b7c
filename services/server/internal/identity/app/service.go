package app

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/clock"
)

// Deps are what a Service needs; Store, Tx, Clock and Logger are required.
type Deps struct {
	// Store keeps principals, devices and tokens.
	Store Store
	// Tx runs the writes that span rows (a device and its token) in one transaction.
	Tx TxRunner
	// Clock is the time of creation, expiry and last use.
	Clock clock.Clock
	// Logger receives failed flushes of last-use times.
	Logger *slog.Logger
	// Random is the source of token secrets; nil means crypto/rand.Reader. Tests pass a
	// fixed reader.
	Random io.Reader
	// Config holds the token lifetime and the flush interval.
	Config Config
	// Appender appends token.revoked, principal.deactivated and principal.reactivated in
	// the transaction of their change.
	Appender kernel.Appender
	// Owners names the instance's owners, for the last-owner rule of Deactivate.
	Owners Owners
	// Instance names the actor of events appended without an actor in ctx.
	Instance Instance
}

// Service implements the identity ports: Directory, Authenticator and Principals itself,
// Tokens and Devices through the views Tokens() and Devices() (their method names clash). It
// also runs the flush of tokens' last-use times (Run, Flush).
type Service struct {
	store    Store
	tx       TxRunner
	clock    clock.Clock
	logger   *slog.Logger
	random   io.Reader
	ttl      time.Duration
	appender kernel.Appender
	owners   Owners
	instance Instance
	lastUsed *lastUsed
	interval time.Duration
	// finalFlushTimeout is identity.last_used_final_flush_timeout.
	finalFlushTimeout time.Duration
	// newTicker makes the flush loop's ticker; tests replace it to tick by hand.
	newTicker func(d time.Duration) (ticks <-chan time.Time, stop func())
}

var (
	_ identity.Directory     = (*Service)(nil)
	_ identity.Authenticator = (*Service)(nil)
	_ identity.Principals    = (*Service)(nil)
	_ identity.Tokens        = tokens{}
	_ identity.Devices       = devices{}
)

// New returns a Service over deps. It fails when a dependency is missing or the
// configuration is invalid (Config.Validate), so wiring mistakes stop the process at start.
func New(deps Deps) (*Service, error) {
	var errs []error
	if deps.Store == nil {
		errs = append(errs, errors.New("store is nil"))
	}
	if deps.Tx == nil {
		errs = append(errs, errors.New("transaction runner is nil"))
	}
	if deps.Clock == nil {
		errs = append(errs, errors.New("clock is nil"))
	}
	if deps.Logger == nil {
		errs = append(errs, errors.New("logger is nil"))
	}
	if deps.Appender == nil {
		errs = append(errs, errors.New("appender is nil"))
	}
	if deps.Owners == nil {
		errs = append(errs, errors.New("owners is nil"))
	}
	if deps.Instance == nil {
		errs = append(errs, errors.New("instance is nil"))
	}
	errs = append(errs, deps.Config.Validate())
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	random := deps.Random
	if random == nil {
		random = rand.Reader
	}
	return &Service{
		store:    deps.Store,
		tx:       deps.Tx,
		clock:    deps.Clock,
		logger:   deps.Logger,
		random:   random,
		ttl:      deps.Config.TokenTTL,
		appender: deps.Appender,
		owners:   deps.Owners,
		instance: deps.Instance,
		lastUsed: newLastUsed(),
		interval: deps.Config.LastUsedFlushInterval,

		finalFlushTimeout: deps.Config.LastUsedFinalFlushTimeout,
		newTicker:         systemTicker,
	}, nil
}
