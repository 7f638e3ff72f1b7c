// Package benchtest runs the bench's cases in the bench packages' smoke tests: TestMain with
// pgtest's PostgreSQL, and Measure on pgtest databases with tiny durations.
package benchtest
