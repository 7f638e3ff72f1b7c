package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
)

const (
	// image is the server image used when a Docker engine answers: PostgreSQL 15, the oldest
	// version bothy supports.
	image = "postgres:15-alpine"
	// dockerProbeTimeout bounds the check for a Docker engine, so machines without one lose
	// at most this much before falling back to local binaries.
	dockerProbeTimeout = time.Second
)

// dockerAvailable reports whether a Docker engine answers a ping. Without one, testcontainers
// fails within a millisecond ("rootless Docker not found").
func dockerAvailable(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, dockerProbeTimeout)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return false
	}
	defer func() { _ = cli.Close() }()
	_, err = cli.Ping(ctx, client.PingOptions{})
	return err == nil
}

// containerServer is a server in a container; testcontainers' reaper removes it if the test
// binary dies before stop.
type containerServer struct {
	ctr  *tcpostgres.PostgresContainer
	base *url.URL
}

func startContainer(ctx context.Context) (*containerServer, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("generate password: %w", err)
	}
	ctr, err := tcpostgres.Run(ctx, image,
		tcpostgres.WithDatabase(TemplateDatabase),
		tcpostgres.WithUsername(superuser),
		tcpostgres.WithPassword(hex.EncodeToString(b)),
		tcpostgres.BasicWaitStrategies(),
		// The module already turns fsync off.
		testcontainers.WithCmdArgs("-c", "full_page_writes=off", "-c", "synchronous_commit=off",
			"-c", "max_connections="+maxConnections),
	)
	if err != nil {
		if ctr != nil {
			_ = testcontainers.TerminateContainer(ctr)
		}
		return nil, fmt.Errorf("start postgres container: %w", err)
	}
	raw, err := ctr.ConnectionString(ctx, "sslmode=disable")
	if err == nil {
		var u *url.URL
		if u, err = url.Parse(raw); err == nil {
			return &containerServer{ctr: ctr, base: u}, nil
		}
	}
	_ = testcontainers.TerminateContainer(ctr)
	return nil, fmt.Errorf("postgres container url: %w", err)
}

func (s *containerServer) url(database string) string {
	u := *s.base
	u.Path = "/" + database
	return u.String()
}

func (s *containerServer) stop(ctx context.Context) error {
	if err := testcontainers.TerminateContainer(s.ctr, testcontainers.StopContext(ctx)); err != nil {
		return fmt.Errorf("terminate postgres container: %w", err)
	}
	return nil
}
