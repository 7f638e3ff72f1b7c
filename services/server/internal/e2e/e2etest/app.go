package e2etest

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/wire"
)

// WaitTimeout bounds every wait of these tests.
const WaitTimeout = 30 * time.Second

// LoadConfig builds a configuration from BOTHY_ variables.
func LoadConfig(t *testing.T, env map[config.Key]string) *config.Config {
	t.Helper()
	var environ []string
	for k, v := range env {
		environ = append(environ, k.EnvName()+"="+v)
	}
	cfg, err := config.Load("", environ)
	if err != nil {
		t.Fatalf("load config: %v", err)
	}
	return cfg
}

// Serving starts app.ServeListener on 127.0.0.1:0 and returns its base URL,
// a function that stops it and the channel Serve's result arrives on.
func Serving(t *testing.T, app *wire.App) (base string, stop context.CancelFunc, done <-chan error) {
	t.Helper()
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch := make(chan error, 1)
	go func() { ch <- app.ServeListener(ctx, ln) }()
	return "http://" + ln.Addr().String(), cancel, ch
}

// Get sends a GET from a goroutine that outlives no test: the server under
// test answers or closes the connection before the test ends.
func Get(url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	return http.DefaultClient.Do(req)
}

// WaitServe waits for Serve to return on done and returns its error, failing the test when
// it has not returned within within.
func WaitServe(t *testing.T, done <-chan error, within time.Duration) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(within):
		t.Fatalf("Serve did not return within %v", within)
		return nil
	}
}
