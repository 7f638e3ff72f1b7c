package wire

import (
	"fmt"
	"io"
	"log/slog"

	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/logging"
)

// NewLogger returns the process's JSON logger writing to w (stderr in
// bothy) at the level of the log.level key. It lives in wire, not in the
// command, so the configuration test reads log.level the way the binary does.
func NewLogger(cfg *config.Config, w io.Writer) (*slog.Logger, error) {
	level, err := logging.ParseLevel(cfg.String(config.LogLevel))
	if err != nil {
		return nil, fmt.Errorf("config key %s: %w", config.LogLevel.Name, err)
	}
	return logging.New(w, level), nil
}
