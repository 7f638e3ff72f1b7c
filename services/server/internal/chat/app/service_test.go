package app_test

import (
	"strings"
	"testing"

	"bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/config"
)

func TestNewRefusesMissingDepsAndBadConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	good := app.Deps{
		Store: e.store, Tx: e.tx, Appender: e.appender, Redactor: e.redactor, Authorizer: e.authz,
		Grants: e.grants, Principals: e.dir, OwnReads: e.ownReads, Readers: e.readers, Clock: clock.NewFake(start), Config: testConfig,
	}
	if _, err := app.New(good); err != nil {
		t.Fatalf("New with every dependency: %v", err)
	}
	tests := []struct {
		name   string
		change func(*app.Deps)
		want   string
	}{
		{"store", func(d *app.Deps) { d.Store = nil }, "store is nil"},
		{"tx", func(d *app.Deps) { d.Tx = nil }, "transaction runner is nil"},
		{"appender", func(d *app.Deps) { d.Appender = nil }, "appender is nil"},
		{"redactor", func(d *app.Deps) { d.Redactor = nil }, "redactor is nil"},
		{"authorizer", func(d *app.Deps) { d.Authorizer = nil }, "authorizer is nil"},
		{"grants", func(d *app.Deps) { d.Grants = nil }, "grants port is nil"},
		{"principals", func(d *app.Deps) { d.Principals = nil }, "principal directory is nil"},
		{"own reads", func(d *app.Deps) { d.OwnReads = nil }, "own reads port is nil"},
		{"readers", func(d *app.Deps) { d.Readers = nil }, "readers port is nil"},
		{"clock", func(d *app.Deps) { d.Clock = nil }, "clock is nil"},
		{"members page size", func(d *app.Deps) { d.Config.MembersPageSize = 0 }, "chat.members_page_size"},
		{"message limit", func(d *app.Deps) { d.Config.MaxMessageBytes = 0 }, "chat.max_message_bytes"},
		{"page size", func(d *app.Deps) { d.Config.MessagesPageSize = 0 }, "chat.messages_page_size"},
		{"dm limit", func(d *app.Deps) { d.Config.MaxDMParticipants = 1 }, "chat.max_dm_participants"},
		{"reaction limit", func(d *app.Deps) { d.Config.MaxReactionsPerMessage = 0 }, "chat.max_reactions_per_message"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := good
			tc.change(&d)
			if _, err := app.New(d); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestConfigFrom(t *testing.T) {
	t.Parallel()
	keys := []config.Key{
		app.KeyMaxMessageBytes, app.KeyMessagesPageSize, app.KeyMaxDMParticipants, app.KeyMaxReactionsPerMessage,
		app.KeySearchPageSize, app.KeySearchQueryMaxChars, app.KeySearchExcerptWords, app.KeyMembersPageSize,
	}
	r := config.NewRegister()
	// The register of this test mirrors the package's keys, so Load can read them.
	for _, k := range keys {
		r.Define(k.Name, k.Kind, k.Default, k.Meaning)
	}
	cfg, err := r.Load("", nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	got := app.ConfigFrom(cfg)
	if err := cfg.Err(); err != nil {
		t.Fatalf("config: %v", err)
	}
	if want := (app.Config{MaxMessageBytes: 16384, MessagesPageSize: 100, MaxDMParticipants: 8, MaxReactionsPerMessage: 20, SearchPageSize: 20, SearchQueryMaxChars: 200, SearchExcerptWords: 30, MembersPageSize: 100}); got != want {
		t.Errorf("ConfigFrom defaults = %+v, want %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}

	cfg, err = r.Load("", []string{"BOTHY_CHAT_MAX_MESSAGE_BYTES=99999999999", "BOTHY_CHAT_MAX_DM_PARTICIPANTS=2"})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	got = app.ConfigFrom(cfg)
	if got.MaxMessageBytes != 1<<31-1 || got.MaxDMParticipants != 2 {
		t.Errorf("ConfigFrom = %+v, want the byte limit capped to 2^31-1 and 2 participants", got)
	}
}

func TestConfigValidateRefusesSearchBoundsBelowTheirMinimum(t *testing.T) {
	t.Parallel()
	valid := app.Config{MaxMessageBytes: 1, MessagesPageSize: 1, MaxDMParticipants: 2, MaxReactionsPerMessage: 1, SearchPageSize: 1, SearchQueryMaxChars: 1, SearchExcerptWords: 2, MembersPageSize: 1}
	if err := valid.Validate(); err != nil {
		t.Fatalf("the minimum of every key: %v", err)
	}
	for key, change := range map[string]func(*app.Config){
		app.KeySearchPageSize.Name:      func(c *app.Config) { c.SearchPageSize = 0 },
		app.KeySearchQueryMaxChars.Name: func(c *app.Config) { c.SearchQueryMaxChars = 0 },
		app.KeySearchExcerptWords.Name:  func(c *app.Config) { c.SearchExcerptWords = 1 },
	} {
		c := valid
		change(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("Validate with %s below its minimum = %v, want an error naming it", key, err)
		}
	}
}
