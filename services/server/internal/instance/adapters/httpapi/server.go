// Package httpapi serves the instance module's HTTP operations (getInstance) as methods of the
// generated strict server; internal/wire embeds Server into the one strict server it mounts.
package httpapi

import (
	"context"
	"errors"

	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel/authorize"
)

// InfoReader reads the instance row. The instance postgres Store implements it.
type InfoReader interface {
	// Info returns the instance; instance.ErrNoInstance before Setup.Ensure ran.
	Info(ctx context.Context) (instance.Info, error)
}

// Deps are the collaborators of a Server, all required.
type Deps struct {
	// Authorizer decides every request before the handler does anything else.
	Authorizer authorize.Authorizer
	// Instance reads the instance row.
	Instance InfoReader
}

// Server implements the strict-server method of getInstance; its problems are errors for the
// edge's one table (ADR 0033).
type Server struct {
	authz    authorize.Authorizer
	instance InfoReader
}

// New returns a Server over deps; it fails when a dependency is missing, so a wiring mistake
// stops the process at start.
func New(deps Deps) (*Server, error) {
	var errs []error
	if deps.Authorizer == nil {
		errs = append(errs, errors.New("authorizer is nil"))
	}
	if deps.Instance == nil {
		errs = append(errs, errors.New("instance reader is nil"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Server{authz: deps.Authorizer, instance: deps.Instance}, nil
}
