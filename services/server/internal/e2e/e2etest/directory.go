package e2etest

import (
	"net/http"
	"net/url"
	"testing"

	"bothy.example.com/server/internal/apigen"
)

// The integration tests of the directory (listPrincipals, getPrincipal; ADR 0029) run over real HTTP through the validating client.

// PrincipalsPath is listPrincipals with the query q (may be empty).
func PrincipalsPath(q url.Values) string {
	if len(q) == 0 {
		return "/api/v1/principals"
	}
	return "/api/v1/principals?" + q.Encode()
}

// Directory lists one page of the directory as a.
func (w *ChatWorld) Directory(t *testing.T, a Actor, q url.Values) apigen.DirectoryPrincipalList {
	t.Helper()
	var page apigen.DirectoryPrincipalList
	w.Must(t, a, http.MethodGet, PrincipalsPath(q), "", http.StatusOK, &page)
	return page
}
