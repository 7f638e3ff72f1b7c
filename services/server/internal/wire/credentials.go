package wire

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"bothy.example.com/server/internal/authz"
	syncapp "bothy.example.com/server/internal/sync/app"
)

// versionRead is the permission_version an API request's authentication read with its token
// (credentialStore), for the handlers after it (withVersionRead). For a request of a
// headRoutes operation it also holds the head and the sync epoch, read before the version in
// the same round trip, for the snapshot (snapshotState).
type versionRead struct {
	v  int64
	ok bool
	// wantHead asks credentialStore to read the head and the epoch too; head is set once it
	// did.
	wantHead bool
	head     *syncapp.SnapshotHead
}

// headRoutes are the operations whose use case starts with the head, the epoch and the
// permission version (getSnapshot and ackEvents, spec 03): their authentication reads
// all three with the token, so the use case saves that round trip.
var headRoutes = map[route]struct{}{
	{method: http.MethodGet, pattern: "/api/v1/sync/snapshot"}:         {},
	{method: http.MethodPost, pattern: "/api/v1/consumers/{name}/ack"}: {},
}

// wantsHead reports whether r is a request of a headRoutes operation.
func wantsHead(r *http.Request) bool {
	rctx := chi.RouteContext(r.Context())
	if rctx == nil {
		return false
	}
	_, ok := headRoutes[route{method: routeMethod(r), pattern: rctx.RoutePattern()}]
	return ok
}

// readHead returns the head, the epoch and the permission version that ctx's authentication
// read (credentialStore, for a headRoutes request); ok is false when it read none.
func readHead(ctx context.Context) (syncapp.SnapshotHead, bool) {
	vr, _ := ctx.Value(versionReadKey{}).(*versionRead)
	if vr == nil || vr.head == nil {
		return syncapp.SnapshotHead{}, false
	}
	return *vr.head, true
}

// versionReadKey keys a request's *versionRead in its context.
type versionReadKey struct{}

// withVersionRead wraps the identity module's authentication middleware for the API's
// operations: the request's token and the permission_version are read in one round trip
// (credentialStore), and the handler runs with that version known
// (authz.WithPermissionVersion), so its first authorization reads no counter of its own. A
// post made three round trips before its transaction (the token, the thread, the version)
// and makes two. The version is read a moment earlier than the handler would read it, as if
// the request had come a moment earlier; a grant the request itself changes is taken from
// the Authorizer's VersionFloor.
func withVersionRead(authenticate func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		known := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if vr, _ := r.Context().Value(versionReadKey{}).(*versionRead); vr != nil && vr.ok {
				r = r.WithContext(authz.WithPermissionVersion(r.Context(), vr.v))
			}
			next.ServeHTTP(w, r)
		})
		authed := authenticate(known)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			vr := &versionRead{wantHead: wantsHead(r)}
			authed.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), versionReadKey{}, vr)))
		})
	}
}
