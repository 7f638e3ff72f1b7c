package domain

import (
	"fmt"
	"regexp"

	"bothy.example.com/server/internal/kernel/problem"
)

// FieldConsumerName names a consumer's name in validation errors (the path parameter name of
// the consumer operations).
const FieldConsumerName = "name"

// consumerName is the form of a consumer name before its length is checked: a lower-case
// letter or digit, then lower-case letters, digits, '_', '.' or '-'. Names travel in URL paths
// and log lines, so they need no escaping anywhere.
var consumerName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)

// ValidConsumerName checks a durable consumer's name: the form above and at most maxLen
// characters (sync.consumer_name_max_length). A failure is a validation error naming name.
func ValidConsumerName(name string, maxLen int) error {
	switch {
	case name == "":
		return problem.Validation(problem.FieldError{Field: FieldConsumerName, Message: "must not be empty"})
	case len(name) > maxLen:
		return problem.Validation(problem.FieldError{Field: FieldConsumerName,
			Message: fmt.Sprintf("must be at most %d characters", maxLen)})
	case !consumerName.MatchString(name):
		return problem.Validation(problem.FieldError{Field: FieldConsumerName,
			Message: "must be a lower-case letter or digit followed by lower-case letters, digits, '_', '.' or '-'"})
	}
	return nil
}
