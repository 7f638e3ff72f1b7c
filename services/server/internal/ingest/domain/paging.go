package domain

import "time"

// GHSearchMax is the most items one page of gh pr list or gh issue list --search can hold:
// GitHub's search never returns more for one query whatever --limit asks, so a pass pages past
// it by raising an updated:>= floor, not by asking for more. It caps ingest.gh_page_size.
const GHSearchMax = 1000

// PageOutcome is what a pass does after one page of pull requests or issues.
type PageOutcome int

// The outcomes of DecidePage. Only OutcomeWindowComplete proves that the remote window holds
// nothing more; after every other outcome more records may exist past the last page, so the
// pass reports done false.
const (
	// OutcomeWindowComplete: the page was not full, so the window is exhausted, whatever the
	// budget.
	OutcomeWindowComplete PageOutcome = iota + 1
	// OutcomeBudgetExhausted: the page was full and the budget is used up: stop paging.
	OutcomeBudgetExhausted
	// OutcomeFloorStalled: the page was full and its last item did not move past the floor
	// (more than a page of records share one updated_at, or the last has none): stop rather
	// than fetch the same page forever.
	OutcomeFloorStalled
	// OutcomeContinue: the page was full, the budget is not used up and the floor moved: fetch
	// the next page from the returned floor.
	OutcomeContinue
)

// String names the outcome for warnings.
func (o PageOutcome) String() string {
	switch o {
	case OutcomeWindowComplete:
		return "window complete"
	case OutcomeBudgetExhausted:
		return "budget exhausted"
	case OutcomeFloorStalled:
		return "floor stalled"
	case OutcomeContinue:
		return "continue"
	}
	return "unknown"
}

// Page is what a pass knows after handling one page.
type Page struct {
	// Full reports whether the page held as many items as a page can (ingest.gh_page_size for gh); a
	// source that returns everything at once (a JSON file) never has a full page.
	Full bool
	// BudgetExhausted reports whether the budget is used up.
	BudgetExhausted bool
	// Floor is the updated_at floor the page was fetched from; zero for none.
	Floor time.Time
	// Last is the updated_at of the page's last item after sorting; zero when it has none.
	Last time.Time
}

// DecidePage decides what follows a page, and for OutcomeContinue the next page's floor
// (inclusive: records sharing the last updated_at are fetched again and skipped by their
// natural keys, so a record that failed beside one that succeeded is not lost).
func DecidePage(p Page) (PageOutcome, time.Time) {
	switch {
	case !p.Full:
		return OutcomeWindowComplete, time.Time{}
	case p.BudgetExhausted:
		return OutcomeBudgetExhausted, time.Time{}
	case p.Last.IsZero() || !p.Last.After(p.Floor):
		return OutcomeFloorStalled, time.Time{}
	}
	return OutcomeContinue, p.Last
}

// SourcePage is one page of records a source read, raw.
type SourcePage[T any] struct {
	// Items are the records of the page that could be decoded, in the source's order.
	Items []T
	// Full reports whether the page held as many records as a page can, so more may follow
	// (gh: ingest.gh_page_size records); a source that reads everything at once reports false.
	Full bool
	// Unreadable counts the records of the page that could not be decoded at all; the pass
	// reports them as rejected.
	Unreadable int
}
