package authorize_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

var (
	idA = uuid.MustParse("0190a6b2-7c1e-7d3a-9f00-00000000000a")
	idS = uuid.MustParse("0190a6b2-7c1e-7d3a-9f00-00000000000b")
	idC = uuid.MustParse("0190a6b2-7c1e-7d3a-9f00-00000000000c")
	idT = uuid.MustParse("0190a6b2-7c1e-7d3a-9f00-00000000000d")
)

func TestResourceFromEvent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		kind kernel.ResourceKind
		id   uuid.UUID
		s, c uuid.UUID
		th   uuid.UUID
		want authorize.Resource
	}{
		{
			name: "message with every ancestor",
			kind: kernel.ResourceMessage, id: idA, s: idS, c: idC, th: idT,
			want: authorize.Resource{Kind: kernel.ResourceMessage, ID: idA, SpaceID: idS, ChannelID: idC, ThreadID: idT},
		},
		{
			name: "channel of a direct message has no space and is direct",
			kind: kernel.ResourceChannel, id: idC, c: idC,
			want: authorize.Resource{Kind: kernel.ResourceChannel, ID: idC, ChannelID: idC, Direct: true},
		},
		{
			name: "message of a direct message is direct",
			kind: kernel.ResourceMessage, id: idA, c: idC, th: idT,
			want: authorize.Resource{Kind: kernel.ResourceMessage, ID: idA, ChannelID: idC, ThreadID: idT, Direct: true},
		},
		{
			name: "channel event without channel_id takes its id",
			kind: kernel.ResourceChannel, id: idC,
			want: authorize.Resource{Kind: kernel.ResourceChannel, ID: idC, Direct: true},
		},
		{
			name: "thread of a standard channel is not direct",
			kind: kernel.ResourceThread, id: idT, s: idS, c: idC, th: idT,
			want: authorize.Resource{Kind: kernel.ResourceThread, ID: idT, SpaceID: idS, ChannelID: idC, ThreadID: idT},
		},
		{
			name: "agent",
			kind: kernel.ResourceAgent, id: idA,
			want: authorize.Resource{Kind: kernel.ResourceAgent, ID: idA},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := authorize.ResourceFromEvent(tc.kind, tc.id, tc.s, tc.c, tc.th)
			if got != tc.want {
				t.Fatalf("ResourceFromEvent = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestInstance(t *testing.T) {
	t.Parallel()
	got := authorize.Instance()
	if got != (authorize.Resource{Kind: kernel.ResourceInstance}) {
		t.Fatalf("Instance() = %+v, want the instance kind and no ids", got)
	}
}

func TestFilter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if authorize.IsFilter(ctx) {
		t.Fatal("IsFilter(background) = true, want false")
	}
	f := authorize.Filter(ctx)
	if !authorize.IsFilter(f) {
		t.Fatal("IsFilter(Filter(ctx)) = false, want true")
	}
	type key struct{}
	child := context.WithValue(f, key{}, 1)
	if !authorize.IsFilter(child) {
		t.Fatal("IsFilter(child of a filter context) = false, want true")
	}
	if authorize.IsFilter(ctx) {
		t.Fatal("Filter changed its parent")
	}
}

func TestResourceString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		res  authorize.Resource
		want string
	}{
		{name: "instance", res: authorize.Instance(), want: "instance"},
		{name: "with id", res: authorize.Resource{Kind: kernel.ResourceChannel, ID: idC}, want: "channel " + idC.String()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.res.String(); got != tc.want {
				t.Fatalf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}
