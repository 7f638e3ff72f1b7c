package app

import (
	"fmt"

	"bothy.example.com/server/internal/kernel/config"
)

// Configuration keys of the authz module; the composition root reads them.
var (
	// KeyScopeCacheSize bounds the per-process Scope cache (least recently used entries are
	// dropped). One entry per active principal; an entry holds the principal's granted ids.
	KeyScopeCacheSize = config.Define("authz.scope_cache_size", config.KindInt, "10000",
		"most permission snapshots (Scope) one process caches, one per principal; at least 1")
	// KeyGrantsPageSize is the default and the cap of listGrants' limit.
	KeyGrantsPageSize = config.Define("authz.grants_page_size", config.KindInt, "100",
		"default and largest page of listGrants; at least 1")
)

// Config is every key of the authz module, read once by the composition root (ConfigFrom)
// and checked before anything is built (Validate).
type Config struct {
	// ScopeCacheSize is authz.scope_cache_size.
	ScopeCacheSize int
	// GrantsPageSize is authz.grants_page_size.
	GrantsPageSize int
}

// ConfigFrom reads the authz keys; parse errors are collected in cfg (config.Config.Err).
func ConfigFrom(cfg *config.Config) Config {
	return Config{
		ScopeCacheSize: cfg.Int(KeyScopeCacheSize),
		GrantsPageSize: cfg.Int(KeyGrantsPageSize),
	}
}

// Validate refuses a cache or a page below 1, which no Authorizer or listing can work with,
// naming the key.
func (c Config) Validate() error {
	switch {
	case c.ScopeCacheSize < 1:
		return fmt.Errorf("%s is %d, want at least 1", KeyScopeCacheSize.Name, c.ScopeCacheSize)
	case c.GrantsPageSize < 1:
		return fmt.Errorf("%s is %d, want at least 1", KeyGrantsPageSize.Name, c.GrantsPageSize)
	}
	return nil
}
