package app

import (
	"fmt"
	"time"

	"bothy.example.com/server/internal/kernel/config"
)

// Configuration keys of the identity module; wire reads them with ConfigFrom.
var (
	// KeyTokenTTL is how long a new token works. A token is a bearer secret that may leak, so
	// the default bounds how long a leaked one stays useful; 0 turns expiry off for operators
	// whose agents cannot rotate tokens. Applied at issue: changing it does not change the
	// expiry of tokens already issued.
	KeyTokenTTL = config.Define("identity.token_ttl", config.KindDuration, "2160h",
		"how long a newly issued token authenticates (0: it never expires); set at issue, so a change applies to new tokens only")
	// KeyLastUsedFlushInterval paces the batched write of tokens' last-use times: authenticating
	// never writes, it records the use in memory, and one UPDATE per interval stores them all.
	KeyLastUsedFlushInterval = config.Define("identity.last_used_flush_interval", config.KindDuration, "1m",
		"how often a process writes the last-use times of the tokens it authenticated, in one statement (more than 0)")
	// KeyTokensPageSize bounds a page of listTokens: a principal's tokens grow with every
	// device and every rotation, revoked ones included.
	KeyTokensPageSize = config.Define("identity.tokens_page_size", config.KindInt, "100",
		"most tokens in one page of listTokens, and its default page size (at least 1)")
	// KeyPrincipalsPageSize bounds a page of listPrincipals, the directory a mention
	// autocomplete asks at every keystroke: a page is what a picker shows, not the instance.
	KeyPrincipalsPageSize = config.Define("identity.principals_page_size", config.KindInt, "100",
		"most principals in one page of listPrincipals, and its default page size (at least 1)")
	// KeyLastUsedFinalFlushTimeout bounds the last flush of tokens' last-use times when the
	// process stops: it is shutting down and must not hang on a database that does not answer.
	KeyLastUsedFinalFlushTimeout = config.Define("identity.last_used_final_flush_timeout", config.KindDuration, "5s",
		"longest the last write of tokens' last-use times may take when a process stops; the uses it could not write are lost (more than 0)")
)

// Config is what the identity use cases read from the configuration.
type Config struct {
	// TokenTTL is identity.token_ttl.
	TokenTTL time.Duration
	// LastUsedFlushInterval is identity.last_used_flush_interval.
	LastUsedFlushInterval time.Duration
	// TokensPageSize is identity.tokens_page_size.
	TokensPageSize int
	// LastUsedFinalFlushTimeout is identity.last_used_final_flush_timeout.
	LastUsedFinalFlushTimeout time.Duration
	// PrincipalsPageSize is identity.principals_page_size.
	PrincipalsPageSize int
}

// ConfigFrom reads the identity keys from cfg; parse errors are collected in cfg
// (config.Config.Err) like those of every other key.
func ConfigFrom(cfg *config.Config) Config {
	return Config{
		TokenTTL:              cfg.Duration(KeyTokenTTL),
		LastUsedFlushInterval: cfg.Duration(KeyLastUsedFlushInterval),
		TokensPageSize:        cfg.Int(KeyTokensPageSize),

		LastUsedFinalFlushTimeout: cfg.Duration(KeyLastUsedFinalFlushTimeout),
		PrincipalsPageSize:        cfg.Int(KeyPrincipalsPageSize),
	}
}

// Validate refuses a negative token lifetime, a flush interval that is not positive (a
// ticker cannot run at 0), a final flush timeout that is not positive (the flush could not
// run) and negative page sizes (a tokens page size of 0 is taken as the default: configs
// written before the key existed; NewListing refuses a principals page size below 1, so a
// configured 0 stops the process at start naming identity.principals_page_size).
func (c Config) Validate() error {
	switch {
	case c.TokenTTL < 0:
		return fmt.Errorf("identity: %s is %v, want 0 (no expiry) or more", KeyTokenTTL.Name, c.TokenTTL)
	case c.LastUsedFlushInterval <= 0:
		return fmt.Errorf("identity: %s is %v, want more than 0", KeyLastUsedFlushInterval.Name, c.LastUsedFlushInterval)
	case c.LastUsedFinalFlushTimeout <= 0:
		return fmt.Errorf("identity: %s is %v, want more than 0", KeyLastUsedFinalFlushTimeout.Name, c.LastUsedFinalFlushTimeout)
	case c.TokensPageSize < 0:
		return fmt.Errorf("identity: %s is %d, want at least 1", KeyTokensPageSize.Name, c.TokensPageSize)
	case c.PrincipalsPageSize < 0:
		return fmt.Errorf("identity: %s is %d, want at least 1", KeyPrincipalsPageSize.Name, c.PrincipalsPageSize)
	}
	return nil
}
