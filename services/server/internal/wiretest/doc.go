// Package wiretest is the test support for integration tests that drive
// bothy through internal/wire and real HTTP: it starts an App on a pgtest
// database behind an httptest server on 127.0.0.1, and its Client validates
// every response against api/openapi.yaml (apitest.Validate: kin-openapi, no
// JSON null anywhere in a body, X-Request-Id required). It is imported only
// by tests, so the production binary never links pgtest or the validator.
package wiretest
