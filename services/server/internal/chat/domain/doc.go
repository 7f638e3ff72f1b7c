// Package domain holds the chat module's rules, free of storage and HTTP: what a valid space,
// channel, thread title and message text are (validation errors name the API's JSON fields
// through problem.Validation), which @handle tokens of a text mention someone, the canonical
// participant set of a direct message, and the state changes of archiving, editing and
// redacting.
package domain
