package e2etest

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
)

// The integration tests of searchMessages (spec 05a "Message search",
// ADR 0024) drive the wired App over real HTTP through the validating client.

// Search runs one searchMessages request as a with the parameters (name, value, ...) and
// returns the page; it fails the test unless the answer is 200.
func (w *World) Search(t *testing.T, a Actor, params ...string) apigen.SearchResults {
	t.Helper()
	var page apigen.SearchResults
	w.Must(t, a, http.MethodGet, SearchPath(params...), "", http.StatusOK, &page)
	return page
}

// SearchAll pages through every hit of the query as a with pages of limit, checking that the
// pages follow one another in the search order without a duplicate, and returns the hits.
func (w *World) SearchAll(t *testing.T, a Actor, limit int, params ...string) []apigen.SearchHit {
	t.Helper()
	var all []apigen.SearchHit
	seen := map[uuid.UUID]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page > 1000 {
			t.Fatalf("search %v as %s: more than 1000 pages", params, a.Name)
		}
		p := append(slices.Clone(params), "limit", fmt.Sprint(limit))
		if cursor != "" {
			p = append(p, "cursor", cursor)
		}
		res := w.Search(t, a, p...)
		if len(res.Items) > limit {
			t.Fatalf("search %v as %s: %d hits in a page of %d", params, a.Name, len(res.Items), limit)
		}
		for _, h := range res.Items {
			if seen[h.Message.Id] {
				t.Fatalf("search %v as %s: message %s twice", params, a.Name, h.Message.Id)
			}
			seen[h.Message.Id] = true
			if n := len(all); n > 0 && !Before(all[n-1], h) {
				t.Fatalf("search %v as %s: hit %s (rank %v) after %s (rank %v), out of order", params, a.Name, h.Message.Id, h.Rank, all[n-1].Message.Id, all[n-1].Rank)
			}
			all = append(all, h)
		}
		if res.NextCursor == nil {
			return all
		}
		cursor = *res.NextCursor
	}
}

// Before reports whether hit a comes before hit b in the search order: rank descending, then
// message id descending.
func Before(a, b apigen.SearchHit) bool {
	if a.Rank != b.Rank {
		return a.Rank > b.Rank
	}
	return strings.Compare(a.Message.Id.String(), b.Message.Id.String()) > 0
}

// SearchPath is the path of searchMessages with the query parameters (name, value, ...).
func SearchPath(params ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(params); i += 2 {
		v.Add(params[i], params[i+1])
	}
	return "/api/v1/search/messages?" + v.Encode()
}

// HitIDs returns the message ids of the hits, in order.
func HitIDs(hits []apigen.SearchHit) []uuid.UUID {
	out := make([]uuid.UUID, len(hits))
	for i, h := range hits {
		out[i] = h.Message.Id
	}
	return out
}

// SameIDs reports whether the two lists hold the same ids, in any order.
func SameIDs(a, b []uuid.UUID) bool {
	key := func(x, y uuid.UUID) int { return strings.Compare(x.String(), y.String()) }
	return slices.Equal(slices.SortedFunc(slices.Values(a), key), slices.SortedFunc(slices.Values(b), key))
}
