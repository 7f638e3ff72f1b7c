package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBareQueriesAreTheServers: a baseline that issues "the same statement bare" must issue the
// server's statement, not an old copy of it. Each bare query below is compared, comments and
// layout aside, with the server's query it stands for; a change to the server's SQL fails here
// until the baseline follows it. The bare queries not listed are the baselines' own (a plain
// counter advance, an INSERT, a window read) with no one statement of the server to match.
func TestBareQueriesAreTheServers(t *testing.T) {
	t.Parallel()
	const server = "../../internal"
	for bare, of := range map[string]string{
		"internal/syncbench/queries/bare_agents_active.sql":                    "agents/adapters/postgres/queries/agent_list_active.sql",
		"internal/chatbench/queries/bare_channel_get.sql":                      "chat/adapters/postgres/queries/channel_get.sql",
		"internal/syncbench/queries/bare_channels_listed.sql":                  "chat/adapters/postgres/queries/channels_listed.sql",
		"internal/syncbench/queries/bare_drafts_of_principal.sql":              "sync/adapters/postgres/queries/drafts_of_principal.sql",
		"internal/syncbench/queries/bare_events_after.sql":                     "sync/adapters/postgres/queries/events_after.sql",
		"internal/syncbench/queries/bare_flags_evaluated.sql":                  "instance/adapters/postgres/queries/flag_evaluate.sql",
		"internal/authzbench/queries/bare_grants_of_principal.sql":             "authz/adapters/postgres/queries/grants_of_principal.sql",
		"internal/syncbench/queries/bare_instance.sql":                         "instance/adapters/postgres/queries/instance_get.sql",
		"internal/syncbench/queries/bare_mentions_unread_count.sql":            "chat/adapters/postgres/queries/mentions_unread_count.sql",
		"internal/chatbench/queries/bare_mentions_unread_count_of_threads.sql": "chat/adapters/postgres/queries/mentions_unread_count_of_threads.sql",
		"internal/bench/queries/bare_permission_version.sql":                   "instance/adapters/postgres/queries/counter_value.sql",
		"internal/syncbench/queries/bare_principal_refs.sql":                   "identity/adapters/postgres/queries/principal_refs.sql",
		"internal/syncbench/queries/bare_read_states_of_principal.sql":         "sync/adapters/postgres/queries/read_states_of_principal.sql",
		"internal/chatbench/queries/bare_read_states_of_threads.sql":           "sync/adapters/postgres/queries/read_states_of_threads.sql",
		"internal/syncbench/queries/bare_settings_of_principal.sql":            "sync/adapters/postgres/queries/settings_of_principal.sql",
		"internal/syncbench/queries/bare_sidebar_of_principal.sql":             "sync/adapters/postgres/queries/sidebar_of_principal.sql",
		"internal/syncbench/queries/bare_spaces_listed.sql":                    "chat/adapters/postgres/queries/spaces_listed.sql",
		"internal/syncbench/queries/bare_sync_epoch.sql":                       "instance/adapters/postgres/queries/instance_sync_epoch.sql",
		"internal/syncbench/queries/bare_thread_counters.sql":                  "chat/adapters/postgres/queries/thread_counters.sql",
		"internal/chatbench/queries/bare_threads_of_channel_page.sql":          "chat/adapters/postgres/queries/threads_of_channel_page.sql",
	} {
		t.Run(bare, func(t *testing.T) {
			t.Parallel()
			got, want := statement(t, bare), statement(t, filepath.Join(server, of))
			if got != want {
				t.Errorf("%s is not the server's %s:\n bare:   %s\n server: %s", bare, of, got, want)
			}
		})
	}
}

// statement returns the SQL of the file at path without its comment lines, its whitespace
// collapsed to single spaces.
func statement(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path) //nolint:gosec // G304: the test's own table of repository files.
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for l := range strings.Lines(string(raw)) {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			lines = append(lines, l)
		}
	}
	return strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
}
