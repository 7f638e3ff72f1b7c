// Package clientbench holds the bench's client cases in the sync world (ADR 0038): the
// TypeScript SDK's cold start in Node (sdk) and the web client's first render of the sidebar
// in Chromium (sidebar). Their smoke tests need the npm packages, the web build and Chromium,
// so they build only with the benchclients tag (make bench-client-test).
package clientbench
