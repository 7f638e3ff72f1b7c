package domain_test

import (
	"testing"
	"time"

	"bothy.example.com/server/internal/ingest/domain"
)

func TestDecidePage(t *testing.T) {
	t.Parallel()
	floor := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	later := floor.Add(time.Hour)
	tests := []struct {
		name      string
		page      domain.Page
		want      domain.PageOutcome
		wantFloor time.Time
	}{
		{"short page completes the window", domain.Page{Full: false, Floor: floor, Last: later}, domain.OutcomeWindowComplete, time.Time{}},
		{"short page completes it even when the budget is used up", domain.Page{Full: false, BudgetExhausted: true}, domain.OutcomeWindowComplete, time.Time{}},
		{"empty page completes it", domain.Page{}, domain.OutcomeWindowComplete, time.Time{}},
		{"full page with the budget used up stops", domain.Page{Full: true, BudgetExhausted: true, Floor: floor, Last: later}, domain.OutcomeBudgetExhausted, time.Time{}},
		{"full page at the floor stalls", domain.Page{Full: true, Floor: floor, Last: floor}, domain.OutcomeFloorStalled, time.Time{}},
		{"full page before the floor stalls", domain.Page{Full: true, Floor: later, Last: floor}, domain.OutcomeFloorStalled, time.Time{}},
		{"full page whose last item has no time stalls", domain.Page{Full: true, Floor: floor}, domain.OutcomeFloorStalled, time.Time{}},
		{"full page past the floor continues from its last item", domain.Page{Full: true, Floor: floor, Last: later}, domain.OutcomeContinue, later},
		{"full first page without floor continues", domain.Page{Full: true, Last: later}, domain.OutcomeContinue, later},
	}
	for _, tc := range tests {
		got, next := domain.DecidePage(tc.page)
		if got != tc.want || !next.Equal(tc.wantFloor) {
			t.Errorf("%s: DecidePage = %v %v, want %v %v", tc.name, got, next, tc.want, tc.wantFloor)
		}
	}
	names := map[domain.PageOutcome]string{
		domain.OutcomeWindowComplete: "window complete", domain.OutcomeBudgetExhausted: "budget exhausted",
		domain.OutcomeFloorStalled: "floor stalled", domain.OutcomeContinue: "continue", 0: "unknown",
	}
	for o, want := range names {
		if o.String() != want {
			t.Errorf("%d.String() = %q, want %q", o, o.String(), want)
		}
	}
}

func TestBudget(t *testing.T) {
	t.Parallel()
	b := domain.NewBudget(2)
	if b.Exhausted() || !b.Take() || !b.Take() || b.Take() || !b.Exhausted() || b.Used() != 2 || b.Max() != 2 {
		t.Fatalf("budget of 2 after three takes: %+v", b)
	}
	b.Refund()
	if b.Exhausted() || b.Used() != 1 || !b.Take() {
		t.Fatalf("a refund gives one attempt back: %+v", b)
	}
	var none domain.Budget
	for range 1000 {
		if !none.Take() {
			t.Fatal("the zero budget has no bound")
		}
	}
	none.Refund()
	if none.Used() != 999 || none.Max() != 0 || domain.NewBudget(-3).Max() != 0 {
		t.Fatalf("unbounded budget: %+v", none)
	}
	var empty domain.Budget
	empty.Refund()
	if empty.Used() != 0 {
		t.Fatal("a refund never goes below zero")
	}
}
