// Package e2etest is the one harness of the end-to-end tests under internal/e2e: the test
// worlds (World, ChatWorld, SyncWorld, ConsumerWorld) that wire an App through wiretest.New
// and drive it over real HTTP and the gateway as named actors, the gateway client, the
// catch-up and snapshot readers, the read model the property tests check against, and the
// register of the API's operations. Every helper two feature packages share lives here, so no
// helper is copied between them. It is imported only by tests, so the production binary never
// links it.
package e2etest
