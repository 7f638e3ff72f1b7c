package httpapi_test

import (
	"testing"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/chat/adapters/httpapi"
	"bothy.example.com/server/internal/kernel/jsontext/jsontexttest"
)

// threadPageCases is how many random pages TestAppendThreadSummaryListIsJSONMarshal compares.
const threadPageCases = 2000

// TestAppendThreadSummaryListIsJSONMarshal: over random pages, in which every member of the
// schema is set (strings with quotes, control characters, HTML characters, U+2028 and invalid
// UTF-8; nil, empty and filled lists; absent and present optional members; times in other
// zones and beyond RFC 3339's years), AppendThreadSummaryList writes exactly what json.Marshal
// writes after whatever dst held, and fails where it fails. The pages are filled by
// reflection, so a member added to ThreadSummary is filled too and fails here until the
// encoder writes it.
func TestAppendThreadSummaryListIsJSONMarshal(t *testing.T) {
	t.Parallel()
	jsontexttest.Compare(t, threadPageCases, 13, httpapi.AppendThreadSummaryList,
		func(l apigen.ThreadSummaryList) any { return l })
}
