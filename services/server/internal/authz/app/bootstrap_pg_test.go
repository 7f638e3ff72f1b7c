package app_test

import (
	"errors"
	"fmt"
	"strings"
	gosync "sync"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/authz/app"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

func TestBootstrapCreatesTheFirstOwnerOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, token, err := e.boot.Bootstrap(t.Context(), "Alex", "alex", "alex@example.com")
	if err != nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	if fmt.Sprint(token) != identity.Redacted || !strings.HasPrefix(token.Reveal(), "bothy_") {
		t.Fatalf("token prints %q, reveals a %d-byte secret", fmt.Sprint(token), len(token.Reveal()))
	}
	who, err := e.identity.Authenticate(t.Context(), token.Reveal())
	if err != nil || who.PrincipalID != id || who.Kind != actor.KindPerson {
		t.Fatalf("Authenticate(bootstrap token) = %+v, %v", who, err)
	}
	s, err := e.auth.Scope(t.Context(), id)
	if err != nil || !s.IsOwner() {
		t.Fatalf("Scope of the bootstrapped person: owner %v, %v", s.IsOwner(), err)
	}
	if err := e.auth.Authorize(actor.With(t.Context(), who), kernel.ActionInstanceAdmin, authorize.Instance()); err != nil {
		t.Fatalf("the owner may administer the instance: %v", err)
	}
	evs := e.eventsAfter(t, 0)
	if len(evs) != 2 || evs[0].Type != app.EventGrantCreated || evs[0].ActorID != id || evs[0].AudienceID != id {
		t.Fatalf("events %+v, want grant.created by and to the owner, then permissions.changed", evs)
	}

	_, _, err = e.boot.Bootstrap(t.Context(), "Sam", "sam", "sam@example.com")
	if !errors.Is(err, app.ErrOwnerExists) || !errors.Is(err, problem.ErrConflict) {
		t.Fatalf("second Bootstrap = %v, want ErrOwnerExists (conflict)", err)
	}
	if p := problem.From(t.Context(), err); !strings.Contains(p.Detail, "owner") {
		t.Errorf("second bootstrap detail %q", p.Detail)
	}
	if _, err := e.identity.CreatePerson(t.Context(), identity.PersonInput{DisplayName: "Sam", Handle: "sam", Email: "sam@example.com"}); err != nil {
		t.Fatalf("the refused bootstrap must not have created sam: %v", err)
	}
}

func TestBootstrapIsAllOrNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, _, err := e.boot.Bootstrap(t.Context(), "Alex", "alex", "not an address")
	if !errors.Is(err, problem.ErrValidation) {
		t.Fatalf("Bootstrap with a bad email = %v, want validation", err)
	}
	grants, err := e.store.Page(t.Context(), uuid.Nil, uuid.Nil, 10)
	if err != nil || len(grants) != 0 {
		t.Fatalf("grants after a failed bootstrap = %v, %v", grants, err)
	}
	if _, _, err := e.boot.Bootstrap(t.Context(), "Alex", "alex", "alex@example.com"); err != nil {
		t.Fatalf("Bootstrap after a failed one: %v", err)
	}
}

func TestConcurrentBootstrapsMakeOneOwner(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	handles := []string{"alex", "sam", "robin"}
	errs := make([]error, len(handles))
	var wg gosync.WaitGroup
	for i, h := range handles {
		wg.Go(func() {
			_, _, errs[i] = e.boot.Bootstrap(t.Context(), h, h, h+"@example.com")
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, app.ErrOwnerExists):
			t.Errorf("Bootstrap: %v", err)
		}
	}
	grants, err := e.store.Page(t.Context(), uuid.Nil, uuid.Nil, 10)
	if ok != 1 || err != nil || len(grants) != 1 || grants[0].Role != authz.RoleOwner {
		t.Fatalf("%d bootstraps succeeded, grants %v (%v); want exactly one owner", ok, grants, err)
	}
}
