package domain_test

import (
	"testing"

	"bothy.example.com/server/internal/sync/domain"
)

func TestUnreadCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                  string
		last, lastRead, floor int64
		want                  int64
	}{
		{name: "never read", last: 7, want: 7},
		{name: "read part", last: 7, lastRead: 4, want: 3},
		{name: "read all", last: 7, lastRead: 7, want: 0},
		{name: "floor above the read position", last: 9, lastRead: 2, floor: 6, want: 3},
		{name: "read position above the floor", last: 9, lastRead: 7, floor: 6, want: 2},
		{name: "everything below the floor", last: 3, floor: 3, want: 0},
		{name: "read position beyond the last message", last: 5, lastRead: 8, want: 0},
		{name: "empty thread", want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := domain.UnreadCount(tc.last, tc.lastRead, tc.floor); got != tc.want {
				t.Fatalf("UnreadCount(%d, %d, %d) = %d, want %d", tc.last, tc.lastRead, tc.floor, got, tc.want)
			}
		})
	}
}
