// Package chatbench holds the bench's chat read cases (ADR 0038): listChannelThreads on the
// main App and searchMessages in a world of its own, each beside its bare SQL.
package chatbench
