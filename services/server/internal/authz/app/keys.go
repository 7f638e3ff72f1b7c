package app

import "bothy.example.com/server/internal/kernel/config"

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
