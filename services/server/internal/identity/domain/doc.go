// Package domain holds the identity module's rules, free of storage and HTTP: what a valid
// person, app, agent, device and handle are, how a token secret is made and hashed, and when
// a stored token authenticates. Validation errors name the API's fields (problem.Validation).
package domain
