package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/sync/domain"
)

// The delivery tests reuse the catch-up fakes (catchup_fakes_test.go): Alex reads the channel
// help of Support, Sam reads Support and Marketing, Robin reads nothing; the fake Scope's
// permission version is 7.

func newDelivery(t *testing.T) (*app.Delivery, *cuAuthz, *cuDirectory) {
	t.Helper()
	az, dir := newCUAuthz(), newCUDirectory()
	d, err := app.NewDelivery(az, dir)
	if err != nil {
		t.Fatalf("NewDelivery: %v", err)
	}
	return d, az, dir
}

func asActor(id uuid.UUID, kind actor.Kind) context.Context {
	return actor.With(context.Background(), actor.Actor{PrincipalID: id, Kind: kind})
}

// permissionsChanged is the personal event authz appends to the grantee of a grant change.
func permissionsChanged(audience uuid.UUID, version int64) domain.StoredEvent {
	e := cuPersonal("permissions.changed", audience, uuid.Nil, uuid.Nil)
	e.Payload = json.RawMessage(`{"principal_id":"` + audience.String() + `","permission_version":` + itoa(version) + `}`)
	return e
}

// allowed runs f.Allow over events and returns which were allowed, failing on an error.
func allowed(ctx context.Context, t *testing.T, f *app.Filter, events ...domain.StoredEvent) []bool {
	t.Helper()
	out := make([]bool, len(events))
	for i, e := range events {
		ok, err := f.Allow(ctx, e)
		if err != nil {
			t.Fatalf("Allow(%s): %v", e.Type, err)
		}
		out[i] = ok
	}
	return out
}

func TestNewDeliveryRefusesMissingParts(t *testing.T) {
	t.Parallel()
	if _, err := app.NewDelivery(nil, newCUDirectory()); err == nil {
		t.Error("NewDelivery without an authorizer succeeded")
	}
	if _, err := app.NewDelivery(newCUAuthz(), nil); err == nil {
		t.Error("NewDelivery without a directory succeeded")
	}
}

func TestDeliveryForRefusesWhoMayNotReceive(t *testing.T) {
	t.Parallel()
	d, az, _ := newDelivery(t)
	if _, err := d.For(context.Background()); !errors.Is(err, problem.ErrUnauthenticated) {
		t.Errorf("For without an actor: %v, want unauthenticated", err)
	}
	pending := actor.With(context.Background(), actor.Actor{PrincipalID: cuSam, Kind: actor.KindPerson, DevicePending: true})
	if _, err := d.For(pending); !errors.Is(err, problem.ErrDevicePending) {
		t.Errorf("For of a pending device: %v, want device_pending", err)
	}
	az.failFor = true
	if _, err := d.For(asActor(cuSam, actor.KindPerson)); !errors.Is(err, errCU) {
		t.Errorf("For when the authorizer fails: %v, want its error", err)
	}
}

func TestFilterAllowsByAudienceAndAuthorize(t *testing.T) {
	t.Parallel()
	d, az, _ := newDelivery(t)
	ctx := asActor(cuAlex, actor.KindPerson)
	f, err := d.For(ctx)
	if err != nil {
		t.Fatalf("For: %v", err)
	}
	if f.Receiver() != domain.ReceiverPerson {
		t.Errorf("Receiver = %q, want person", f.Receiver())
	}
	if f.Scope().PrincipalID() != cuAlex {
		t.Errorf("Scope of %v, want Alex's", f.Scope().PrincipalID())
	}
	got := allowed(ctx, t, f,
		cuMessage(cuSupport, cuHelp, cuSam),                                        // Alex reads help
		cuMessage(cuMarketing, cuNews, cuSam),                                      // but not news
		cuPersonal("draft.saved", cuAlex, cuMarketing, cuNews),                     // own data, unauthorized
		cuPersonal("draft.saved", cuSam, cuSupport, cuHelp),                        // Sam's data
		cuAgentCreated(cuSam),                                                      // Alex may not read agents
		permissionsChanged(cuAlex, 7),                                              // own, not newer
		cuPersonal("setting.updated", cuRobin, uuid.Nil, uuid.Nil),                 // Robin's
		cuPersonal("read_state.updated", cuAlex, cuMarketing, cuNews),              // own
		cuMessage(cuSupport, uuid.Must(uuid.NewV7()), cuSam),                       // another channel of Support
		cuPersonal("sidebar.updated", uuid.Must(uuid.NewV7()), uuid.Nil, uuid.Nil), // a stranger's
	)
	want := []bool{true, false, true, false, false, true, false, true, false, false}
	if !slices.Equal(got, want) {
		t.Errorf("allowed = %v, want %v", got, want)
	}
	for _, dec := range az.recorded() {
		if !dec.filter {
			t.Errorf("decision %v ran outside filter mode", dec)
		}
	}
	if n := len(az.recorded()); n != 4 {
		t.Errorf("%d decisions, want 4 (personal events are never authorized)", n)
	}
}

func TestFilterFailsOnAnUnexpectedDecision(t *testing.T) {
	t.Parallel()
	d, az, _ := newDelivery(t)
	ctx := asActor(cuSam, actor.KindPerson)
	f, err := d.For(ctx)
	if err != nil {
		t.Fatalf("For: %v", err)
	}
	e := cuMessage(cuSupport, cuHelp, cuSam)
	az.failOn = e.ResourceID
	if _, err := f.Allow(ctx, e); !errors.Is(err, errCU) {
		t.Errorf("Allow: %v, want the authorizer's error", err)
	}
	forbidden := cuMessage(cuSupport, cuHelp, cuSam)
	az.forbidOn = forbidden.ResourceID
	if ok, err := f.Allow(ctx, forbidden); ok || err != nil {
		t.Errorf("Allow of a forbidden event = %v, %v; want false, nil", ok, err)
	}
}

// TestFilterRefreshesOnItsPermissionsChanged: the filter decides with the Scope it was made
// with until the receiver's own permissions.changed with a newer version arrives; from the
// next event on it decides with the current grants, so a revoke applies at once.
func TestFilterRefreshesOnItsPermissionsChanged(t *testing.T) {
	t.Parallel()
	d, az, _ := newDelivery(t)
	ctx := asActor(cuSam, actor.KindPerson)
	f, err := d.For(ctx)
	if err != nil {
		t.Fatalf("For: %v", err)
	}
	// Sam loses Support (the revoke has committed; the filter has not seen its event yet).
	az.mu.Lock()
	r := az.readers[cuSam]
	r.spaces = []uuid.UUID{cuMarketing}
	az.readers[cuSam] = r
	az.mu.Unlock()

	got := allowed(ctx, t, f,
		cuMessage(cuSupport, cuHelp, cuAlex),   // before the revoke's event: old Scope
		permissionsChanged(cuSam, 7),           // not newer: no refresh
		cuMessage(cuSupport, cuHelp, cuAlex),   // still the old Scope
		permissionsChanged(cuAlex, 9),          // someone else's: never delivered, no refresh
		cuMessage(cuSupport, cuHelp, cuAlex),   // still the old Scope
		permissionsChanged(cuSam, 8),           // Sam's, newer: delivered, then refresh
		cuMessage(cuSupport, cuHelp, cuAlex),   // revoked
		cuMessage(cuMarketing, cuNews, cuAlex), // still granted
	)
	want := []bool{true, true, true, false, true, true, false, true}
	if !slices.Equal(got, want) {
		t.Errorf("allowed = %v, want %v", got, want)
	}
}

func TestFilterRefresh(t *testing.T) {
	t.Parallel()
	d, az, _ := newDelivery(t)
	ctx := asActor(cuSam, actor.KindPerson)
	f, err := d.For(ctx)
	if err != nil {
		t.Fatalf("For: %v", err)
	}
	az.mu.Lock()
	az.readers[cuSam] = cuReader{kind: actor.KindPerson}
	az.mu.Unlock()
	if err := f.Refresh(ctx); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if got := allowed(ctx, t, f, cuMessage(cuSupport, cuHelp, cuAlex)); got[0] {
		t.Error("after Refresh the filter still allows what was revoked")
	}
	az.failFor = true
	if err := f.Refresh(ctx); !errors.Is(err, errCU) {
		t.Errorf("Refresh when the authorizer fails: %v", err)
	}
	// A payload without a readable version refreshes too (and reports the failure).
	bad := permissionsChanged(cuSam, 0)
	bad.Payload = json.RawMessage(`{"permission_version":"soon"}`)
	if _, err := f.Allow(ctx, bad); !errors.Is(err, errCU) {
		t.Errorf("Allow of an unreadable permissions.changed: %v, want the refresh's error", err)
	}
}

func TestDeliveryNamesAndEncode(t *testing.T) {
	t.Parallel()
	d, _, dir := newDelivery(t)
	ctx := asActor(cuBot, actor.KindAgent)
	events := []domain.StoredEvent{
		cuMessage(cuSupport, cuHelp, cuSam),
		cuMessage(cuSupport, cuHelp, cuSam),
		cuMessage(cuSupport, cuHelp, cuRobin), // unknown to the directory
		cuAgentCreated(uuid.Nil),
	}
	for i := range events {
		events[i].Seq = int64(10 + i)
		events[i].Payload = json.RawMessage(`{}`)
	}
	events[0].TraceContext = json.RawMessage(`{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`)

	names, err := d.Names(ctx, events)
	if err != nil {
		t.Fatalf("Names: %v", err)
	}
	calls := dir.recordedCalls()
	if len(calls) != 1 || !slices.Equal(calls[0], []uuid.UUID{cuSam, cuRobin}) {
		t.Errorf("directory calls = %v, want one call for Sam and Robin", calls)
	}
	for _, kind := range []domain.ReceiverKind{domain.ReceiverAgent, domain.ReceiverPerson} {
		raw := app.Encode(events, names, nil, kind)
		envs := cuDecode(t, raw)
		if !slices.Equal(cuSeqs(envs), []int64{10, 11, 12, 13}) {
			t.Fatalf("seqs = %v", cuSeqs(envs))
		}
		if envs[0].Actor.DisplayName != "Sam" || envs[2].Actor.ID != cuRobin || envs[2].Actor.DisplayName != "" {
			t.Errorf("actors = %+v", envs)
		}
		if traced := envs[0].TraceContext != nil; traced != (kind == domain.ReceiverAgent) {
			t.Errorf("trace_context for %s: %s", kind, envs[0].TraceContext)
		}
		want := string(domain.AppendEnvelope(nil, events[1], domain.PrincipalRef{ID: cuSam, Kind: actor.KindPerson, DisplayName: "Sam", Handle: "sam"}, kind))
		if string(raw[1]) != want {
			t.Errorf("envelope = %s, want %s", raw[1], want)
		}
		// Views are capped: appending to one cannot touch the next.
		_ = append(raw[0], '!')
		if raw[1][0] != '{' {
			t.Error("appending to one envelope changed the next")
		}
	}

	if names, err := d.Names(ctx, nil); err != nil || names != nil {
		t.Errorf("Names of nothing = %v, %v; want no query", names, err)
	}
	if got := app.Encode(nil, nil, nil, domain.ReceiverPerson); got == nil || len(got) != 0 {
		t.Errorf("Encode of nothing = %#v, want an empty list", got)
	}
	dir.mu.Lock()
	dir.fail = true
	dir.mu.Unlock()
	if _, err := d.Names(ctx, events); !errors.Is(err, errCU) {
		t.Errorf("Names when the directory fails: %v", err)
	}
}
