package domain_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/domain"
)

func TestDirectParticipants(t *testing.T) {
	t.Parallel()
	sam := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000b2")
	robin := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000b3")
	tests := []struct {
		name    string
		in      []uuid.UUID
		max     int
		want    []uuid.UUID
		invalid bool
	}{
		{name: "one other", in: []uuid.UUID{sam}, max: 8, want: []uuid.UUID{alex, sam}},
		{name: "sorted whatever the order", in: []uuid.UUID{robin, sam}, max: 8, want: []uuid.UUID{alex, sam, robin}},
		{name: "actor listed too", in: []uuid.UUID{sam, alex}, max: 8, want: []uuid.UUID{alex, sam}},
		{name: "duplicates count once", in: []uuid.UUID{sam, sam, robin, sam}, max: 3, want: []uuid.UUID{alex, sam, robin}},
		{name: "empty", in: nil, max: 8, invalid: true},
		{name: "the actor alone", in: []uuid.UUID{alex, alex}, max: 8, invalid: true},
		{name: "nil id", in: []uuid.UUID{sam, uuid.Nil}, max: 8, invalid: true},
		{name: "too many", in: []uuid.UUID{sam, robin}, max: 2, invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.DirectParticipants(alex, tt.in, tt.max)
			var want []string
			if tt.invalid {
				want = []string{"participant_ids"}
			}
			if f := fields(t, err); !slices.Equal(f, want) {
				t.Fatalf("invalid fields = %v, want %v (err %v)", f, want, err)
			}
			if !tt.invalid && !slices.Equal(got, tt.want) {
				t.Fatalf("DirectParticipants = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDirectKey(t *testing.T) {
	t.Parallel()
	sam := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000b2")
	a, err := domain.DirectParticipants(alex, []uuid.UUID{sam}, 8)
	if err != nil {
		t.Fatal(err)
	}
	b, err := domain.DirectParticipants(sam, []uuid.UUID{alex, sam}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if domain.DirectKey(a) != domain.DirectKey(b) {
		t.Fatalf("the same set has two keys: %q and %q", domain.DirectKey(a), domain.DirectKey(b))
	}
	want := alex.String() + "," + sam.String()
	if got := domain.DirectKey(a); got != want {
		t.Fatalf("DirectKey = %q, want %q", got, want)
	}
}

func TestSortIDs(t *testing.T) {
	t.Parallel()
	sam := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000b2")
	if got := domain.SortIDs([]uuid.UUID{sam, alex, sam}); !slices.Equal(got, []uuid.UUID{alex, sam}) {
		t.Fatalf("SortIDs = %v, want [alex sam]", got)
	}
	if got := domain.SortIDs(nil); len(got) != 0 {
		t.Fatalf("SortIDs(nil) = %v", got)
	}
}

func TestNewDirect(t *testing.T) {
	t.Parallel()
	sam := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000b2")
	ch := domain.NewDirect(id, []uuid.UUID{alex, sam}, now)
	if ch.ID != id || ch.SpaceID != uuid.Nil || ch.Kind != chat.ChannelDM || ch.Name != "" || ch.Version != 1 ||
		!slices.Equal(ch.ParticipantIDs, []uuid.UUID{alex, sam}) || !ch.CreatedAt.Equal(now) || ch.CreatedAt.Location() != time.UTC {
		t.Fatalf("NewDirect = %+v", ch)
	}
}
