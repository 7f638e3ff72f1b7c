package app

import (
	"errors"
	"fmt"
	"time"

	"bothy.example.com/server/internal/kernel/config"
)

// Config is every key of the agents module, read once by the composition root (ConfigFrom)
// and checked before anything is built (Validate), so a typo or a bad value of any agents.*
// key stops the process at start with the key's name.
type Config struct {
	// Presence holds the agents.presence_* keys and agents.max_billing_mode_length.
	Presence PresenceConfig
	// Invocations holds the agents.invocation_* keys.
	Invocations InvocationConfig
	// Runs holds the agents.run_* keys.
	Runs RunsConfig
}

// RunsConfig is what the runs read from the configuration (RunsDeps takes its fields).
type RunsConfig struct {
	// ProgressMaxLength is agents.run_progress_max_length.
	ProgressMaxLength int
	// StaleAfter is agents.run_stale_after.
	StaleAfter time.Duration
	// ExpiryBatch is agents.run_expiry_batch.
	ExpiryBatch int
}

// ConfigFrom reads the agents keys; parse errors are collected in cfg (config.Config.Err).
func ConfigFrom(cfg *config.Config) Config {
	return Config{
		Presence:    PresenceConfigFrom(cfg),
		Invocations: InvocationConfigFrom(cfg),
		Runs: RunsConfig{
			ProgressMaxLength: cfg.Int(KeyRunProgressMaxLength),
			StaleAfter:        cfg.Duration(KeyRunStaleAfter),
			ExpiryBatch:       cfg.Int(KeyRunExpiryBatch),
		},
	}
}

// Validate reports the values the agents module cannot work with, naming each key.
func (c Config) Validate() error {
	return errors.Join(c.Presence.Validate(), c.Invocations.Validate(), c.Runs.Validate())
}

// Validate refuses a progress length or a batch below 1 and a staleness that is not
// positive, naming the key.
func (c RunsConfig) Validate() error {
	switch {
	case c.ProgressMaxLength < 1:
		return fmt.Errorf("%s is %d, want at least 1", KeyRunProgressMaxLength.Name, c.ProgressMaxLength)
	case c.StaleAfter <= 0:
		return fmt.Errorf("%s is %v, want more than 0", KeyRunStaleAfter.Name, c.StaleAfter)
	case c.ExpiryBatch < 1:
		return fmt.Errorf("%s is %d, want at least 1", KeyRunExpiryBatch.Name, c.ExpiryBatch)
	}
	return nil
}
