package wire

import (
	"fmt"
	"net"
	"net/http"
	gosync "sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/httpmw"
	"bothy.example.com/server/internal/kernel/ratelimit"
	"bothy.example.com/server/internal/ops"
	"bothy.example.com/server/internal/sync/adapters/gateway"
)

// limitsConfig is what bounds one client (ADR 0019): the timeouts, the
// connection cap and the rate limits, as read from their keys.
type limitsConfig struct {
	readHeader, read, write, idle time.Duration
	maxConns                      int
	trustedProxies                string
	tokenWrites                   rateConfig
	addressWrites                 rateConfig
	failedAuth                    rateConfig
	maxBuckets                    int
	sweep                         time.Duration
}

// rateConfig is one rate limit's keys: perSecond tokens a second (0: off)
// up to burst.
type rateConfig struct {
	name      string
	perSecond float64
	burst     int
}

func readLimitsConfig(cfg *config.Config) limitsConfig {
	return limitsConfig{
		readHeader:     cfg.Duration(config.HTTPReadHeaderTimeout),
		read:           cfg.Duration(config.HTTPReadTimeout),
		write:          cfg.Duration(config.HTTPWriteTimeout),
		idle:           cfg.Duration(config.HTTPIdleTimeout),
		maxConns:       cfg.Int(config.HTTPMaxConnections),
		trustedProxies: cfg.String(config.HTTPTrustedProxies),
		tokenWrites: rateConfig{name: "http.rate_limit.token_writes",
			perSecond: float64(cfg.Int(config.RateTokenWritesPerSecond)), burst: cfg.Int(config.RateTokenWritesBurst)},
		addressWrites: rateConfig{name: "http.rate_limit.address_writes",
			perSecond: float64(cfg.Int(config.RateAddressWritesPerSecond)), burst: cfg.Int(config.RateAddressWritesBurst)},
		failedAuth: rateConfig{name: "http.rate_limit.failed_auth",
			perSecond: float64(cfg.Int(config.RateFailedAuthPerMinute)) / 60, burst: cfg.Int(config.RateFailedAuthBurst)},
		maxBuckets: cfg.Int(config.RateMaxBuckets),
		sweep:      cfg.Duration(config.RateSweepInterval),
	}
}

func (c limitsConfig) validate() error {
	switch {
	case c.read < 0 || c.write < 0:
		return fmt.Errorf("configuration: http.read_timeout and http.write_timeout must not be negative (%v, %v)", c.read, c.write)
	case c.read > 0 && c.read < c.readHeader:
		return fmt.Errorf("configuration: http.read_timeout (%v) is shorter than http.read_header_timeout (%v), which it includes", c.read, c.readHeader)
	case c.idle <= 0:
		return fmt.Errorf("configuration: http.idle_timeout is %v, want more than 0", c.idle)
	case c.maxConns < 1:
		return fmt.Errorf("configuration: http.max_connections is %d, want at least 1", c.maxConns)
	}
	for _, r := range []rateConfig{c.tokenWrites, c.addressWrites, c.failedAuth} {
		if r.perSecond == 0 {
			continue
		}
		if err := c.rate(r).Validate(); err != nil {
			return fmt.Errorf("configuration: %s: %w", r.name, err)
		}
	}
	if _, err := httpmw.NewClientAddrs(c.trustedProxies); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	return nil
}

func (c limitsConfig) rate(r rateConfig) ratelimit.Config {
	return ratelimit.Config{Rate: r.perSecond, Burst: r.burst, MaxBuckets: c.maxBuckets, SweepInterval: c.sweep}
}

// limits is the process's bounds: its limiters (nil when off), the client
// addresses, the metrics and the connection cap of the listener Serve opens.
type limits struct {
	cfg                                    limitsConfig
	addrs                                  *httpmw.ClientAddrs
	tokenWrites, addressWrites, failedAuth *ratelimit.Limiter
	metrics                                *ops.LimitMetrics

	mu    gosync.Mutex
	conns *httpmw.ConnLimit
}

// newLimits builds the limiters on clk and registers the metrics.
func newLimits(cfg limitsConfig, clk clock.Clock, reg prometheus.Registerer) (*limits, error) {
	l := &limits{cfg: cfg}
	var err error
	if l.addrs, err = httpmw.NewClientAddrs(cfg.trustedProxies); err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	limiter := func(r rateConfig) *ratelimit.Limiter {
		if r.perSecond == 0 {
			return nil
		}
		return ratelimit.New(cfg.rate(r), clk)
	}
	l.tokenWrites, l.addressWrites, l.failedAuth = limiter(cfg.tokenWrites), limiter(cfg.addressWrites), limiter(cfg.failedAuth)
	names := []string{httpmw.LimitTokenWrites, httpmw.LimitAddressWrites, httpmw.LimitFailedAuth}
	if l.metrics, err = ops.NewLimitMetrics(reg, names, l.open); err != nil {
		return nil, err
	}
	return l, nil
}

// open is the number of connections open on the listener (the gauge).
func (l *limits) open() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conns == nil {
		return 0
	}
	return float64(l.conns.Open())
}

// listener wraps ln in the connection cap.
func (l *limits) listener(ln net.Listener, readHeaderTimeout time.Duration) net.Listener {
	c := httpmw.LimitConnections(ln, l.cfg.maxConns, readHeaderTimeout, l.metrics.ConnectionRefused)
	l.mu.Lock()
	l.conns = c
	l.mu.Unlock()
	return c
}

// perAddress is the chi middleware of the per-address limits: failed
// authentications (on every route but the public ones, the gateway's
// included) and writes. The public operations (health, readiness,
// metrics) read no credential and are probed by load balancers and
// monitors, often from an address a blocked client shares, so an address's
// block never reaches them.
func (l *limits) perAddress(public map[route]struct{}) []func(http.Handler) http.Handler {
	var mws []func(http.Handler) http.Handler
	if l.failedAuth != nil {
		limited := httpmw.FailedAuth(l.failedAuth, l.addrs, l.metrics.Limited)
		mws = append(mws, func(next http.Handler) http.Handler {
			guarded := limited(next)
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, ok := public[route{method: routeMethod(r), pattern: r.URL.Path}]; ok {
					next.ServeHTTP(w, r)
					return
				}
				guarded.ServeHTTP(w, r)
			})
		})
	}
	if l.addressWrites != nil {
		mws = append(mws, httpmw.LimitWrites(l.addressWrites, httpmw.LimitAddressWrites, l.addrs.Of, l.metrics.Limited))
	}
	return mws
}

// perToken is the per-token write limit, run around each operation inside
// authentication (it needs the actor) and outside idempotency (a refused
// request must not be stored for replay); nil when off.
func (l *limits) perToken() apigen.MiddlewareFunc {
	if l.tokenWrites == nil {
		return nil
	}
	return apigen.MiddlewareFunc(httpmw.LimitWrites(l.tokenWrites, httpmw.LimitTokenWrites, httpmw.ActorKey, l.metrics.Limited))
}

// gatewayFailedAuth is the gateway's port to the limit of failed authentications: an auth
// frame's refused token takes from its upgrade's address's bucket, as a REST 401 does.
// nil (nothing counted) when the limit is off.
func (l *limits) gatewayFailedAuth() gateway.FailedAuth {
	if l.failedAuth == nil {
		return nil
	}
	return failedAuthBucket{l: l.failedAuth, addrs: l.addrs}
}

// gatewayFrameWrites is the gateway's port to the per-token write limit: its ack and
// heartbeat frames take from the bucket their token's REST writes take from, and a refusal is
// counted under the same name. nil (nothing limited) when the limit is off.
func (l *limits) gatewayFrameWrites() gateway.FrameWrites {
	if l.tokenWrites == nil {
		return nil
	}
	return frameWrites{l: l.tokenWrites, refused: l.metrics.Limited}
}

// frameWrites implements gateway.FrameWrites over the per-token write limiter.
type frameWrites struct {
	l       *ratelimit.Limiter
	refused httpmw.Refused
}

// Allow implements gateway.FrameWrites.
func (f frameWrites) Allow(key string) (bool, time.Duration) {
	ok, wait := f.l.Allow(key)
	if !ok && f.refused != nil {
		f.refused(httpmw.LimitTokenWrites)
	}
	return ok, wait
}

// failedAuthBucket implements gateway.FailedAuth over the limiter and the client addresses
// the FailedAuth middleware uses.
type failedAuthBucket struct {
	l     *ratelimit.Limiter
	addrs *httpmw.ClientAddrs
}

// Address implements gateway.FailedAuth.
func (b failedAuthBucket) Address(r *http.Request) string { return b.addrs.Of(r) }

// Failed implements gateway.FailedAuth.
func (b failedAuthBucket) Failed(addr string) { b.l.Take(addr) }
