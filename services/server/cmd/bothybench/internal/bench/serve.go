package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"bothy.example.com/server/internal/wire"
)

// ServeLocal serves app's HTTP handler on a free loopback port for the cases that measure over
// HTTP, and returns the base URL of it and the function that stops it (its error is the serve
// error, if any). name labels the errors with the case.
func ServeLocal(ctx context.Context, app *wire.App, name string) (baseURL string, stop func() error, err error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("%s: listen: %w", name, err)
	}
	serveCtx, stopServe := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- app.ServeListener(serveCtx, ln) }()
	return "http://" + ln.Addr().String(), func() error {
		stopServe()
		if serr := <-served; serr != nil {
			return fmt.Errorf("%s: serve: %w", name, serr)
		}
		return nil
	}, nil
}

// ServeHandler serves h, a reference server the benchmark itself writes (not bothy), on a free
// loopback port with a plain net/http server, and returns its host:port and the function that
// closes it and waits for Serve to return (its error is the serve or close error, if any).
// name labels the errors with the case.
func ServeHandler(ctx context.Context, name string, h http.Handler) (addr string, stop func() error, err error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("%s: listen: %w", name, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	return ln.Addr().String(), func() error {
		cerr := srv.Close()
		if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
			return fmt.Errorf("%s: serve: %w", name, serr)
		}
		if cerr != nil {
			return fmt.Errorf("%s: close: %w", name, cerr)
		}
		return nil
	}, nil
}
