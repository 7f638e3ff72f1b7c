package wire_test

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

// The integration tests of the directory (listPrincipals, getPrincipal; issue 13, deliverable
// 3) run over real HTTP through the validating client.

// principalsPath is listPrincipals with the query q (may be empty).
func principalsPath(q url.Values) string {
	if len(q) == 0 {
		return "/api/v1/principals"
	}
	return "/api/v1/principals?" + q.Encode()
}

// directory lists one page of the directory as a.
func (w *chatWorld) directory(t *testing.T, a worldActor, q url.Values) apigen.DirectoryPrincipalList {
	t.Helper()
	var page apigen.DirectoryPrincipalList
	w.must(t, a, http.MethodGet, principalsPath(q), "", http.StatusOK, &page)
	return page
}

// handles are the handles of a page, in order.
func handles(items []apigen.DirectoryPrincipal) []string {
	out := make([]string, len(items))
	for i, p := range items {
		out[i] = p.Handle
	}
	return out
}

// TestListPrincipals: every principal sees every principal in handle order, people and agents
// alike, without grants and without emails; deactivated principals are left out (a mention
// autocomplete offers only who can be mentioned) unless include_deactivated asks for them,
// marked; the prefix matches handles and display names in any case; small pages reach the end.
func TestListPrincipals(t *testing.T) {
	w := newPeople(t, true) // Robin is an agent; nobody but Alex holds a grant
	helper := w.person(t, "Robin Two", "rtwo")

	for _, a := range []worldActor{w.alex, w.sam, w.robin} {
		page := w.directory(t, a, nil)
		if got, want := handles(page.Items), []string{"alex", "robin", "rtwo", "sam"}; !slices.Equal(got, want) {
			t.Fatalf("%s lists %v, want %v", a.name, got, want)
		}
		if page.NextCursor != nil {
			t.Fatalf("%s: next_cursor on a short page", a.name)
		}
	}
	r := w.must(t, w.sam, http.MethodGet, principalsPath(nil), "", http.StatusOK, nil)
	if strings.Contains(string(r.Body), "example.com") || strings.Contains(string(r.Body), `"email"`) {
		t.Fatalf("the directory shows emails: %s", r.Body)
	}
	page := w.directory(t, w.sam, nil)
	kinds := map[string]apigen.PrincipalKind{}
	for _, p := range page.Items {
		kinds[p.Handle] = p.Kind
	}
	if kinds["robin"] != apigen.PrincipalKind("agent") || kinds["sam"] != apigen.PrincipalKind("person") {
		t.Fatalf("kinds %v", kinds)
	}

	w.must(t, w.alex, http.MethodPost, "/api/v1/principals/"+helper.id.String()+"/deactivate", "", http.StatusOK, nil)
	for _, q := range []url.Values{nil, {"include_deactivated": {"false"}}, {"prefix": {"rt"}}} {
		if got, want := handles(w.directory(t, w.sam, q).Items), []string{"alex", "robin", "sam"}; q["prefix"] == nil && !slices.Equal(got, want) {
			t.Fatalf("after the deactivation, %v lists %v, want %v", q, got, want)
		} else if q["prefix"] != nil && len(got) != 0 {
			t.Fatalf("the autocomplete of rt offers %v, want no one (rtwo is deactivated)", got)
		}
	}
	page = w.directory(t, w.sam, url.Values{"include_deactivated": {"true"}})
	if got, want := handles(page.Items), []string{"alex", "robin", "rtwo", "sam"}; !slices.Equal(got, want) {
		t.Fatalf("include_deactivated lists %v, want %v", got, want)
	}
	for _, p := range page.Items {
		if (p.DeactivatedAt != nil) != (p.Handle == "rtwo") {
			t.Fatalf("%s deactivated_at %v", p.Handle, p.DeactivatedAt)
		}
	}
	w.must(t, w.alex, http.MethodPost, "/api/v1/principals/"+helper.id.String()+"/reactivate", "", http.StatusOK, nil)

	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"s", []string{"sam"}},
		{"SA", []string{"sam"}},
		{"r", []string{"robin", "rtwo"}},
		{"robin", []string{"robin", "rtwo"}}, // rtwo by its display name
		{"Robin T", []string{"rtwo"}},
		{"rt", []string{"rtwo"}},
		{"x", []string{}},
		{"%", []string{}}, // no pattern characters
		{"_", []string{}},
	} {
		got := handles(w.directory(t, w.sam, url.Values{"prefix": {tc.prefix}}).Items)
		if !slices.Equal(got, tc.want) {
			t.Fatalf("prefix %q lists %v, want %v", tc.prefix, got, tc.want)
		}
	}

	for _, limit := range []int{1, 2, 3} {
		var got []string
		q := url.Values{"limit": {fmt.Sprint(limit)}}
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatalf("limit %d: more than 10 pages", limit)
			}
			page := w.directory(t, w.sam, q)
			got = append(got, handles(page.Items)...)
			if page.NextCursor == nil {
				break
			}
			q.Set("cursor", *page.NextCursor)
		}
		if want := []string{"alex", "robin", "rtwo", "sam"}; !slices.Equal(got, want) {
			t.Fatalf("limit %d pages %v, want %v", limit, got, want)
		}
	}
	paged := w.directory(t, w.sam, url.Values{"prefix": {"r"}, "limit": {"1"}})
	if len(paged.Items) != 1 || paged.NextCursor == nil {
		t.Fatalf("a prefixed first page of 1: %+v", paged)
	}
	rest := w.directory(t, w.sam, url.Values{"prefix": {"r"}, "cursor": {*paged.NextCursor}})
	if got := handles(rest.Items); !slices.Equal(got, []string{"rtwo"}) {
		t.Fatalf("the prefixed second page %v, want [rtwo]", got)
	}
}

// TestGetPrincipal: any principal reads any other as the directory shows it; an unknown id is
// 404, an app 403, a malformed id 400.
func TestGetPrincipal(t *testing.T) {
	w := newPeople(t, false)
	var p apigen.DirectoryPrincipal
	r := w.must(t, w.sam, http.MethodGet, "/api/v1/principals/"+w.alex.id.String(), "", http.StatusOK, &p)
	if p.Id != w.alex.id || p.Handle != "alex" || p.DisplayName != "Alex" || p.Kind != apigen.PrincipalKind("person") || p.DeactivatedAt != nil {
		t.Fatalf("Alex as Sam reads him: %+v", p)
	}
	if strings.Contains(string(r.Body), "email") {
		t.Fatalf("getPrincipal shows an email: %s", r.Body)
	}
	w.must(t, w.alex, http.MethodPost, "/api/v1/principals/"+w.robin.id.String()+"/deactivate", "", http.StatusOK, nil)
	w.must(t, w.sam, http.MethodGet, "/api/v1/principals/"+w.robin.id.String(), "", http.StatusOK, &p)
	if p.DeactivatedAt == nil {
		t.Fatal("a deactivated principal is not marked")
	}

	w.do(t, w.sam, http.MethodGet, "/api/v1/principals/"+uuid.NewString(), "").RequireProblem(t, http.StatusNotFound, notFound)
	bot := w.app(t, "Ticket bot", "ticketbot", "messages:read")
	w.do(t, bot, http.MethodGet, "/api/v1/principals/"+w.alex.id.String(), "").RequireProblem(t, http.StatusForbidden, forbidden)
	w.do(t, bot, http.MethodGet, principalsPath(nil), "").RequireProblem(t, http.StatusForbidden, forbidden)
}

// TestDirectoryRefusals: bad parameters answer 400 naming them; no token answers 401.
func TestDirectoryRefusals(t *testing.T) {
	w := newChatWorld(t, false)
	w.refuse(t,
		refusal{name: "empty prefix", as: w.sam, method: http.MethodGet, path: "/api/v1/principals?prefix=",
			status: http.StatusBadRequest, code: invalid, fields: []string{"prefix"}},
		refusal{name: "long prefix", as: w.sam, method: http.MethodGet, path: principalsPath(url.Values{"prefix": {strings.Repeat("s", 101)}}),
			status: http.StatusBadRequest, code: invalid, fields: []string{"prefix"}},
		refusal{name: "cursor that is no handle", as: w.sam, method: http.MethodGet, path: principalsPath(url.Values{"cursor": {"Not a handle"}}),
			status: http.StatusBadRequest, code: invalid, fields: []string{"cursor"}},
		refusal{name: "limit not a number", as: w.sam, method: http.MethodGet, path: principalsPath(url.Values{"limit": {"many"}}),
			status: http.StatusBadRequest, code: invalid, fields: []string{"limit"}},
		refusal{name: "principal id not a uuid", as: w.sam, method: http.MethodGet, path: "/api/v1/principals/sam",
			status: http.StatusBadRequest, code: invalid, fields: []string{"principal_id"}},
	)
	w.do(t, worldActor{name: "nobody"}, http.MethodGet, principalsPath(nil), "").RequireProblem(t, http.StatusUnauthorized, "unauthenticated")
}
