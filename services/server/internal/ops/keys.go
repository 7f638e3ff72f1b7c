package ops

import "bothy.example.com/server/internal/kernel/config"

// KeyReadinessTimeout bounds the checks behind /readyz. Orchestrators give a
// probe a few seconds; answering 503 within this time is better than letting
// the probe itself time out while the database hangs.
var KeyReadinessTimeout = config.Define("ops.readiness_timeout", config.KindDuration, "2s",
	"how long /readyz waits for the database ping and the migration check before answering 503 unavailable")
