package wire

import (
	"errors"
	"fmt"
	"math"
	"time"

	agentsapp "bothy.example.com/server/internal/agents/app"
	authzapp "bothy.example.com/server/internal/authz/app"
	chatapp "bothy.example.com/server/internal/chat/app"
	chatdomain "bothy.example.com/server/internal/chat/domain"
	identityapp "bothy.example.com/server/internal/identity/app"
	ingestapp "bothy.example.com/server/internal/ingest/app"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/httpmw"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/ops"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	syncapp "bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/webui"
)

// settings is every configuration key one process reads, read at once by readSettings so
// that New reports every bad value and typo together (config.Config.Err): each module's keys
// through its own Config (ConfigFrom, Validate), the edge's and the process's here.
type settings struct {
	// The process and its HTTP edge.
	addr                               string
	readHeaderTimeout, shutdownTimeout time.Duration
	dbURL                              string
	maxConns                           int
	maxBody, compressMin               int64
	retryAfter                         time.Duration
	rollbackTimeout, readinessTimeout  time.Duration
	cors                               httpmw.CORSConfig
	corsErr                            error
	limits                             limitsConfig
	webDir                             string
	gateway                            gateway.Config

	// The modules.
	log      logConfig
	identity identityapp.Config
	authz    authzapp.Config
	agents   agentsapp.Config
	chat     chatapp.Config
	// threadList is chat's thread list's keys (listChannelThreads).
	threadList chatapp.ThreadListConfig
	sync       syncapp.Config
	ingest     ingestConfig
	// ingestErr is an ingest masker threshold out of range (ingestapp.LimitsFrom).
	ingestErr error
}

// readSettings reads every key; bad values are collected in cfg.Err. databaseURL, when not
// empty, overrides database.url (Options.DatabaseURL).
func readSettings(cfg *config.Config, databaseURL string) settings {
	origins, corsErr := httpmw.ParseOrigins(cfg.String(config.HTTPCORSAllowedOrigins))
	ingest, ingestErr := ingestapp.LimitsFrom(cfg, chatdomain.MaxTitleLen)
	s := settings{
		addr:              cfg.String(config.HTTPAddr),
		readHeaderTimeout: cfg.Duration(config.HTTPReadHeaderTimeout),
		shutdownTimeout:   cfg.Duration(config.HTTPShutdownTimeout),
		dbURL:             cfg.String(config.DatabaseURL),
		maxConns:          cfg.Int(config.DatabaseMaxConns),
		maxBody:           cfg.Bytes(config.HTTPMaxBodyBytes),
		retryAfter:        cfg.Duration(config.HTTPUnavailableRetryAfter),
		compressMin:       cfg.Bytes(config.HTTPCompressMinBytes),
		rollbackTimeout:   cfg.Duration(tx.KeyRollbackTimeout),
		readinessTimeout:  cfg.Duration(ops.KeyReadinessTimeout),
		cors:              httpmw.CORSConfig{AllowedOrigins: origins, MaxAge: cfg.Duration(config.HTTPCORSMaxAge)},
		corsErr:           corsErr,
		limits:            readLimitsConfig(cfg),
		webDir:            cfg.String(webui.KeyDir),
		gateway:           gateway.ConfigFrom(cfg),

		log:        readLogConfig(cfg),
		identity:   identityapp.ConfigFrom(cfg),
		authz:      authzapp.ConfigFrom(cfg),
		agents:     agentsapp.ConfigFrom(cfg),
		chat:       chatapp.ConfigFrom(cfg),
		threadList: chatapp.ThreadListConfigFrom(cfg),
		sync:       syncapp.ConfigFrom(cfg),
		ingest:     ingestConfig{limits: ingest, ghPageSize: ingestapp.GHPageSizeFrom(cfg)},
		ingestErr:  ingestErr,
	}
	if databaseURL != "" {
		s.dbURL = databaseURL
	}
	return s
}

// validate rejects values the keys' types allow but the process cannot work with, naming
// the key, and a missing database URL.
func (s settings) validate() error {
	if s.dbURL == "" {
		return errors.New("wire: no database url: set database.url or start the embedded default with wire.Database")
	}
	if s.retryAfter < time.Second {
		return fmt.Errorf("configuration: %s is %v, want at least 1s (Retry-After counts whole seconds)",
			config.HTTPUnavailableRetryAfter.Name, s.retryAfter)
	}
	if s.compressMin > math.MaxInt32 {
		return fmt.Errorf("configuration: %s is %d, want at most %d", config.HTTPCompressMinBytes.Name, s.compressMin, math.MaxInt32)
	}
	if s.corsErr != nil {
		return fmt.Errorf("configuration: %s: %w", config.HTTPCORSAllowedOrigins.Name, s.corsErr)
	}
	for _, err := range []error{
		tx.CheckRollbackTimeout(s.rollbackTimeout),
		s.log.validate(), s.sync.Validate(),
		s.identity.Validate(), s.authz.Validate(), s.agents.Validate(), s.chat.Validate(), s.threadList.Validate(),
		s.ingestErr, ingestapp.CheckLimits(s.ingest.limits), ingestapp.CheckGHPageSize(s.ingest.ghPageSize),
		s.gateway.Validate(),
	} {
		if err != nil {
			return fmt.Errorf("configuration: %w", err)
		}
	}
	return s.limits.validate()
}
