package wire

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"

	"bothy.example.com/server/internal/apigen"
)

// route is an operation as the chi router knows it: the method and the
// route pattern (the OpenAPI path, whose {name} parameters chi spells alike).
type route struct {
	method  string
	pattern string
}

// publicRoutes returns the operations of doc that need no token: those whose
// effective security requirement is empty (the operation's own `security`
// when it has one, else the document's). Taken from the document the server
// is generated from, so a public operation is public because api/openapi.yaml
// says so, never because of a hand-kept list. It fails on an operation that
// names no security scheme but is not explicitly public, which would be a
// document the router and the contract read differently.
func publicRoutes(doc *openapi3.T) (map[route]struct{}, error) {
	public := map[route]struct{}{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			security := doc.Security
			if op.Security != nil {
				security = *op.Security
			}
			if !isPublic(security) {
				continue
			}
			if op.Security == nil {
				return nil, fmt.Errorf("openapi: %s %s is public only because the document has no security requirement; say security: [] on the operation", method, path)
			}
			public[route{method: strings.ToUpper(method), pattern: path}] = struct{}{}
		}
	}
	return public, nil
}

// isPublic reports whether a security requirement lets a request through
// without credentials: no alternative at all, or an empty alternative ({}).
func isPublic(reqs openapi3.SecurityRequirements) bool {
	if len(reqs) == 0 {
		return true
	}
	for _, r := range reqs {
		if len(r) == 0 {
			return true
		}
	}
	return false
}

// authenticateOperations returns the middleware wire attaches to every
// generated operation (apigen.ChiServerOptions.Middlewares): requests to a
// public operation pass untouched, every other request goes through
// authenticate (the identity module's middleware, which sets the actor or
// answers 401). Because the generated router calls it only for a matched
// operation, unknown paths keep their 404 and wrong methods their 405. The
// generated wrapper binds path and query parameters before it runs the
// middleware, so a malformed parameter is a 400 even without a token; the
// 400 names the parameter and reveals nothing about any resource.
func authenticateOperations(public map[route]struct{}, authenticate func(http.Handler) http.Handler) apigen.MiddlewareFunc {
	return func(next http.Handler) http.Handler {
		authed := authenticate(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if rctx := chi.RouteContext(r.Context()); rctx != nil {
				if _, ok := public[route{method: routeMethod(r), pattern: rctx.RoutePattern()}]; ok {
					next.ServeHTTP(w, r)
					return
				}
			}
			authed.ServeHTTP(w, r)
		})
	}
}
