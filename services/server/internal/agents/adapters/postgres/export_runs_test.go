package postgres

// StaleRunsSQL exposes the expiry sweep's statement, so a test can EXPLAIN it.
var StaleRunsSQL = runListStale
