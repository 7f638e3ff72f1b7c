package identity

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
)

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
	w := e2etest.NewPeople(t, true) // Robin is an agent; nobody but Alex holds a grant
	helper := w.Person(t, "Robin Two", "rtwo")

	for _, a := range []e2etest.Actor{w.Alex, w.Sam, w.Robin} {
		page := w.Directory(t, a, nil)
		if got, want := handles(page.Items), []string{"alex", "robin", "rtwo", "sam"}; !slices.Equal(got, want) {
			t.Fatalf("%s lists %v, want %v", a.Name, got, want)
		}
		if page.NextCursor != nil {
			t.Fatalf("%s: next_cursor on a short page", a.Name)
		}
	}
	r := w.Must(t, w.Sam, http.MethodGet, e2etest.PrincipalsPath(nil), "", http.StatusOK, nil)
	if strings.Contains(string(r.Body), "example.com") || strings.Contains(string(r.Body), `"email"`) {
		t.Fatalf("the directory shows emails: %s", r.Body)
	}
	page := w.Directory(t, w.Sam, nil)
	kinds := map[string]apigen.PrincipalKind{}
	for _, p := range page.Items {
		kinds[p.Handle] = p.Kind
	}
	if kinds["robin"] != apigen.PrincipalKind("agent") || kinds["sam"] != apigen.PrincipalKind("person") {
		t.Fatalf("kinds %v", kinds)
	}

	w.Must(t, w.Alex, http.MethodPost, "/api/v1/principals/"+helper.ID.String()+"/deactivate", "", http.StatusOK, nil)
	for _, q := range []url.Values{nil, {"include_deactivated": {"false"}}, {"prefix": {"rt"}}} {
		if got, want := handles(w.Directory(t, w.Sam, q).Items), []string{"alex", "robin", "sam"}; q["prefix"] == nil && !slices.Equal(got, want) {
			t.Fatalf("after the deactivation, %v lists %v, want %v", q, got, want)
		} else if q["prefix"] != nil && len(got) != 0 {
			t.Fatalf("the autocomplete of rt offers %v, want no one (rtwo is deactivated)", got)
		}
	}
	page = w.Directory(t, w.Sam, url.Values{"include_deactivated": {"true"}})
	if got, want := handles(page.Items), []string{"alex", "robin", "rtwo", "sam"}; !slices.Equal(got, want) {
		t.Fatalf("include_deactivated lists %v, want %v", got, want)
	}
	for _, p := range page.Items {
		if (p.DeactivatedAt != nil) != (p.Handle == "rtwo") {
			t.Fatalf("%s deactivated_at %v", p.Handle, p.DeactivatedAt)
		}
	}
	w.Must(t, w.Alex, http.MethodPost, "/api/v1/principals/"+helper.ID.String()+"/reactivate", "", http.StatusOK, nil)

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
		got := handles(w.Directory(t, w.Sam, url.Values{"prefix": {tc.prefix}}).Items)
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
			page := w.Directory(t, w.Sam, q)
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
	paged := w.Directory(t, w.Sam, url.Values{"prefix": {"r"}, "limit": {"1"}})
	if len(paged.Items) != 1 || paged.NextCursor == nil {
		t.Fatalf("a prefixed first page of 1: %+v", paged)
	}
	rest := w.Directory(t, w.Sam, url.Values{"prefix": {"r"}, "cursor": {*paged.NextCursor}})
	if got := handles(rest.Items); !slices.Equal(got, []string{"rtwo"}) {
		t.Fatalf("the prefixed second page %v, want [rtwo]", got)
	}
}

// TestGetPrincipal: any principal reads any other as the directory shows it; an unknown id is
// 404, an app 403, a malformed id 400.
func TestGetPrincipal(t *testing.T) {
	w := e2etest.NewPeople(t, false)
	var p apigen.DirectoryPrincipal
	r := w.Must(t, w.Sam, http.MethodGet, "/api/v1/principals/"+w.Alex.ID.String(), "", http.StatusOK, &p)
	if p.Id != w.Alex.ID || p.Handle != "alex" || p.DisplayName != "Alex" || p.Kind != apigen.PrincipalKind("person") || p.DeactivatedAt != nil {
		t.Fatalf("Alex as Sam reads him: %+v", p)
	}
	if strings.Contains(string(r.Body), "email") {
		t.Fatalf("getPrincipal shows an email: %s", r.Body)
	}
	w.Must(t, w.Alex, http.MethodPost, "/api/v1/principals/"+w.Robin.ID.String()+"/deactivate", "", http.StatusOK, nil)
	w.Must(t, w.Sam, http.MethodGet, "/api/v1/principals/"+w.Robin.ID.String(), "", http.StatusOK, &p)
	if p.DeactivatedAt == nil {
		t.Fatal("a deactivated principal is not marked")
	}

	w.Do(t, w.Sam, http.MethodGet, "/api/v1/principals/"+uuid.NewString(), "").RequireProblem(t, http.StatusNotFound, e2etest.NotFound)
	bot := w.App(t, "Ticket bot", "ticketbot", "messages:read")
	w.Do(t, bot, http.MethodGet, "/api/v1/principals/"+w.Alex.ID.String(), "").RequireProblem(t, http.StatusForbidden, e2etest.Forbidden)
	w.Do(t, bot, http.MethodGet, e2etest.PrincipalsPath(nil), "").RequireProblem(t, http.StatusForbidden, e2etest.Forbidden)
}

// TestDirectoryRefusals: bad parameters answer 400 naming them; no token answers 401.
func TestDirectoryRefusals(t *testing.T) {
	w := e2etest.NewChatWorld(t, false)
	w.Refuse(t,
		e2etest.Refusal{Name: "empty prefix", As: w.Sam, Method: http.MethodGet, Path: "/api/v1/principals?prefix=",
			Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"prefix"}},
		e2etest.Refusal{Name: "long prefix", As: w.Sam, Method: http.MethodGet, Path: e2etest.PrincipalsPath(url.Values{"prefix": {strings.Repeat("s", 101)}}),
			Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"prefix"}},
		e2etest.Refusal{Name: "cursor that is no handle", As: w.Sam, Method: http.MethodGet, Path: e2etest.PrincipalsPath(url.Values{"cursor": {"Not a handle"}}),
			Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"cursor"}},
		e2etest.Refusal{Name: "limit not a number", As: w.Sam, Method: http.MethodGet, Path: e2etest.PrincipalsPath(url.Values{"limit": {"many"}}),
			Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"limit"}},
		e2etest.Refusal{Name: "principal id not a uuid", As: w.Sam, Method: http.MethodGet, Path: "/api/v1/principals/sam",
			Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"principal_id"}},
	)
	w.Do(t, e2etest.Actor{Name: "nobody"}, http.MethodGet, e2etest.PrincipalsPath(nil), "").RequireProblem(t, http.StatusUnauthorized, "unauthenticated")
}
