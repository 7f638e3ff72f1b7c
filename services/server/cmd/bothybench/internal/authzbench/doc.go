// Package authzbench holds the bench's authorization case on the main App (ADR 0038): the
// Authorizer, the Decider and the Scope build under testing.Benchmark, beside the bare
// permission_version read, the policy alone and the bare grant query.
package authzbench
