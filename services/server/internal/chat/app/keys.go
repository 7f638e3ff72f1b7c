package app

import (
	"fmt"

	"bothy.example.com/server/internal/kernel/config"
)

// Configuration keys of the chat module; wire reads them with ConfigFrom.
var (
	// KeyMaxMessageBytes bounds one message's Markdown text. Every message is stored, sent in
	// events and replayed by catch-up, so the bound keeps one message from weighing on all of
	// them; 16 KiB holds several screens of text.
	KeyMaxMessageBytes = config.Define("chat.max_message_bytes", config.KindBytes, "16384",
		"largest message text (content_md) in bytes; a longer one is refused with 400 validation_failed")
	// KeyMessagesPageSize is the default and the cap of listMessages' limit.
	KeyMessagesPageSize = config.Define("chat.messages_page_size", config.KindInt, "100",
		"default and largest page of listMessages; at least 1")
	// KeyThreadsPageSize is the default and the cap of listChannelThreads' limit: one page is
	// one query over the channel's index in activity order plus one read of the actor's read
	// states, so the page, not the channel, sets the cost.
	KeyThreadsPageSize = config.Define("chat.threads_page_size", config.KindInt, "50",
		"default and largest page of listChannelThreads; at least 1")
	// KeyThreadExcerptChars bounds the first message's excerpt of a listChannelThreads item:
	// enough for a line of preview, while a page of long first messages stays small.
	KeyThreadExcerptChars = config.Define("chat.thread_excerpt_chars", config.KindInt, "200",
		"most characters of a thread's first message in a listChannelThreads item; at least 1")
	// KeyMaxDMParticipants bounds a direct message's participants, the actor included; a
	// larger group belongs in a channel.
	KeyMaxDMParticipants = config.Define("chat.max_dm_participants", config.KindInt, "8",
		"most participants of a direct message, the one who opens it included; at least 2")
)

// Config is what the chat use cases read from the configuration.
type Config struct {
	// MaxMessageBytes is chat.max_message_bytes.
	MaxMessageBytes int
	// MessagesPageSize is chat.messages_page_size.
	MessagesPageSize int
	// MaxDMParticipants is chat.max_dm_participants.
	MaxDMParticipants int
}

// ConfigFrom reads the chat keys from cfg; parse errors are collected in cfg
// (config.Config.Err) like those of every other key.
func ConfigFrom(cfg *config.Config) Config {
	return Config{
		MaxMessageBytes:   int(min(cfg.Bytes(KeyMaxMessageBytes), int64(maxInt))),
		MessagesPageSize:  cfg.Int(KeyMessagesPageSize),
		MaxDMParticipants: cfg.Int(KeyMaxDMParticipants),
	}
}

// maxInt caps a configured byte count to what an int holds on every platform Go supports.
const maxInt = 1<<31 - 1

// Validate refuses a message limit below 1 byte, a page size below 1 and a direct-message
// limit below 2 (the actor and one other).
func (c Config) Validate() error {
	switch {
	case c.MaxMessageBytes < 1:
		return fmt.Errorf("chat: %s is %d, want at least 1", KeyMaxMessageBytes.Name, c.MaxMessageBytes)
	case c.MessagesPageSize < 1:
		return fmt.Errorf("chat: %s is %d, want at least 1", KeyMessagesPageSize.Name, c.MessagesPageSize)
	case c.MaxDMParticipants < 2:
		return fmt.Errorf("chat: %s is %d, want at least 2", KeyMaxDMParticipants.Name, c.MaxDMParticipants)
	}
	return nil
}

// ThreadListConfig is what the thread list (listChannelThreads) reads from the configuration.
type ThreadListConfig struct {
	// PageSize is chat.threads_page_size.
	PageSize int
	// ExcerptChars is chat.thread_excerpt_chars.
	ExcerptChars int
}

// ThreadListConfigFrom reads the thread list's keys from cfg; parse errors are collected in
// cfg like those of every other key.
func ThreadListConfigFrom(cfg *config.Config) ThreadListConfig {
	return ThreadListConfig{PageSize: cfg.Int(KeyThreadsPageSize), ExcerptChars: cfg.Int(KeyThreadExcerptChars)}
}

// Validate refuses a page size or an excerpt below 1.
func (c ThreadListConfig) Validate() error {
	switch {
	case c.PageSize < 1:
		return fmt.Errorf("chat: %s is %d, want at least 1", KeyThreadsPageSize.Name, c.PageSize)
	case c.ExcerptChars < 1:
		return fmt.Errorf("chat: %s is %d, want at least 1", KeyThreadExcerptChars.Name, c.ExcerptChars)
	}
	return nil
}
