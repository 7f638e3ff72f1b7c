package contract

import (
	"fmt"
	"strings"
	"testing"

	"bothy.example.com/server/internal/apigen"
	chatdomain "bothy.example.com/server/internal/chat/domain"
	"bothy.example.com/server/internal/kernel/correlation"
	syncdomain "bothy.example.com/server/internal/sync/domain"
)

// TestContractLengths: the length limits that api/openapi.yaml states in prose (they count
// characters after trimming, so they are no maxLength) are the ones the code enforces. They are
// contract values, not configuration keys (architecture/limitcheck.yaml lists them as
// contract); this test keeps the two in step.
func TestContractLengths(t *testing.T) {
	t.Parallel()
	doc, err := apigen.GetSpec()
	if err != nil {
		t.Fatalf("GetSpec: %v", err)
	}
	tests := []struct {
		schema, property string
		want             string
	}{
		{"CreateSpaceRequest", "name", fmt.Sprintf("1 to %d characters", chatdomain.MaxNameLen)},
		{"CreateSpaceRequest", "description", fmt.Sprintf("At most %d characters", chatdomain.MaxDescriptionLen)},
		{"CreateChannelRequest", "name", fmt.Sprintf("1 to %d characters", chatdomain.MaxNameLen)},
		{"CreateChannelRequest", "topic", fmt.Sprintf("At most %d characters", chatdomain.MaxTopicLen)},
		{"CreateThreadRequest", "title", fmt.Sprintf("At most %d characters", chatdomain.MaxTitleLen)},
		{"SidebarSection", "title", fmt.Sprintf("At most %d characters", syncdomain.MaxSectionTitleLen)},
	}
	for _, tc := range tests {
		t.Run(tc.schema+"."+tc.property, func(t *testing.T) {
			t.Parallel()
			ref := doc.Components.Schemas[tc.schema]
			if ref == nil || ref.Value == nil {
				t.Fatalf("schema %s missing from api/openapi.yaml", tc.schema)
			}
			prop := ref.Value.Properties[tc.property]
			if prop == nil || prop.Value == nil {
				t.Fatalf("property %s.%s missing from api/openapi.yaml", tc.schema, tc.property)
			}
			if !strings.Contains(prop.Value.Description, tc.want) {
				t.Errorf("%s.%s description = %q, want it to state %q", tc.schema, tc.property, prop.Value.Description, tc.want)
			}
		})
	}
	t.Run("X-Request-Id", func(t *testing.T) {
		t.Parallel()
		want := fmt.Sprintf("1 to %d characters", correlation.MaxLen)
		if desc := strings.Join(strings.Fields(doc.Info.Description), " "); !strings.Contains(desc, want) {
			t.Errorf("info.description does not state the correlation id's length %q", want)
		}
	})
}
