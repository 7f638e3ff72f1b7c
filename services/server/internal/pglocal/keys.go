package pglocal

import (
	"fmt"
	"time"

	"bothy.example.com/server/internal/kernel/config"
)

// Configuration keys of the embedded cluster's waits; wire reads them with TimeoutsFrom and
// passes them in Options.Timeouts.
var (
	// KeyStartTimeout bounds a start when the caller's context has no deadline: initdb on a
	// slow disk takes seconds, a server that never gets ready must not hang bothy serve.
	KeyStartTimeout = config.Define("embedded.start_timeout", config.KindDuration, "60s",
		"longest the embedded default cluster may take to start (initdb on first use included) when nothing else bounds the start (more than 0)")
	// KeyStopTimeout bounds a fast shutdown before Stop falls back to an immediate one.
	KeyStopTimeout = config.Define("embedded.stop_timeout", config.KindDuration, "30s",
		"longest a fast shutdown of the embedded default cluster may take before it is shut down immediately (more than 0)")
	// KeyLeftoverTimeout bounds the wait for the processes of a killed or stopped server to
	// exit, before a new server starts in the same directory.
	KeyLeftoverTimeout = config.Define("embedded.leftover_timeout", config.KindDuration, "30s",
		"longest the embedded default cluster waits for the processes of a server left behind (or just stopped) in its directory to exit (at least 1s: pg_ctl counts whole seconds)")
	// KeyPollInterval is how often readiness, the owner lock and process exits are checked.
	KeyPollInterval = config.Define("embedded.poll_interval", config.KindDuration, "10ms",
		"how often the embedded default cluster checks, while it starts or stops, whether the server is ready, the owner lock is free or the processes have exited (more than 0)")
)

// Timeouts are the waits of a cluster; a zero field takes its key's default.
type Timeouts struct {
	// Start is embedded.start_timeout.
	Start time.Duration
	// Stop is embedded.stop_timeout.
	Stop time.Duration
	// Leftover is embedded.leftover_timeout.
	Leftover time.Duration
	// Poll is embedded.poll_interval.
	Poll time.Duration
}

// TimeoutsFrom reads the keys from cfg; parse errors are collected in cfg (config.Config.Err)
// like those of every other key.
func TimeoutsFrom(cfg *config.Config) Timeouts {
	return Timeouts{
		Start:    cfg.Duration(KeyStartTimeout),
		Stop:     cfg.Duration(KeyStopTimeout),
		Leftover: cfg.Duration(KeyLeftoverTimeout),
		Poll:     cfg.Duration(KeyPollInterval),
	}
}

// Validate refuses a wait that is not positive and a leftover timeout below a second (pg_ctl
// takes whole seconds), naming the key.
func (t Timeouts) Validate() error {
	for _, f := range []struct {
		key config.Key
		d   time.Duration
	}{{KeyStartTimeout, t.Start}, {KeyStopTimeout, t.Stop}, {KeyLeftoverTimeout, t.Leftover}, {KeyPollInterval, t.Poll}} {
		if f.d <= 0 {
			return fmt.Errorf("pglocal: %s is %v, want more than 0", f.key.Name, f.d)
		}
	}
	if t.Leftover < time.Second {
		return fmt.Errorf("pglocal: %s is %v, want at least 1s (pg_ctl counts whole seconds)", KeyLeftoverTimeout.Name, t.Leftover)
	}
	return nil
}

// withDefaults fills every zero field with its key's default.
func (t Timeouts) withDefaults() Timeouts {
	fill := func(d *time.Duration, k config.Key) {
		if *d == 0 {
			*d = mustDuration(k)
		}
	}
	fill(&t.Start, KeyStartTimeout)
	fill(&t.Stop, KeyStopTimeout)
	fill(&t.Leftover, KeyLeftoverTimeout)
	fill(&t.Poll, KeyPollInterval)
	return t
}

func mustDuration(k config.Key) time.Duration {
	d, err := time.ParseDuration(k.Default)
	if err != nil {
		panic("pglocal: " + k.Name + " has a bad default: " + err.Error())
	}
	return d
}
