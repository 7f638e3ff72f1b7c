package main

import (
	"context"
	"fmt"
	"net"

	"bothy.example.com/server/internal/wire"
)

// serveLocal serves app's HTTP handler on a free loopback port for the cases that measure over
// HTTP, and returns the base URL of it and the function that stops it (its error is the serve
// error, if any). name labels the errors with the case.
func serveLocal(ctx context.Context, app *wire.App, name string) (baseURL string, stop func() error, err error) {
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
