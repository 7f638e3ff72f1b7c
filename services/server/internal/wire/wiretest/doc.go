// Package wiretest is the test support for integration tests that drive
// bothy through internal/wire and real HTTP: it starts an App on a pgtest
// database behind an httptest server on 127.0.0.1, and its Client validates
// every response against api/openapi.yaml (kin-openapi), rejects JSON null
// anywhere in a body, and requires X-Request-Id. It is imported only by
// tests, so the production binary never links pgtest or the validator.
package wiretest
