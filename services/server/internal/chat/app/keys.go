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
	// KeyMembersPageSize is the default and the cap of listChannelMembers' limit: a channel of
	// a large space is readable by every member of the space, so the list is paged.
	KeyMembersPageSize = config.Define("chat.members_page_size", config.KindInt, "100",
		"default and largest page of listChannelMembers; at least 1")
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
	// KeyMaxReactionsPerMessage bounds the distinct reactions of one message (ADR 0025): every
	// read of the message lists them, so the bound keeps a page of messages small; a principal
	// may still make every one of them.
	KeyMaxReactionsPerMessage = config.Define("chat.max_reactions_per_message", config.KindInt, "20",
		"most distinct reactions one message holds; a new one beyond it is refused with 409 conflict; at least 1")
	// KeySearchPageSize is the default and the cap of searchMessages' limit: every hit is
	// ranked, authorized, excerpted and sent, so a page stays small.
	KeySearchPageSize = config.Define("chat.search_page_size", config.KindInt, "20",
		"default and largest page of searchMessages (hits checked per page); at least 1")
	// KeySearchQueryMaxChars bounds searchMessages' q: a query is a few words, and a long one
	// only makes the index work harder.
	KeySearchQueryMaxChars = config.Define("chat.search_query_max_chars", config.KindInt, "200",
		"longest query text (q) of searchMessages in characters; a longer one is refused with 400 validation_failed; at least 1")
	// KeySearchExcerptWords bounds the excerpt of each hit (ts_headline's MaxWords; MinWords
	// is half of it).
	KeySearchExcerptWords = config.Define("chat.search_excerpt_words", config.KindInt, "30",
		"most words of a searchMessages hit's excerpt; at least 2")
)

// Config is what the chat use cases read from the configuration.
type Config struct {
	// MaxMessageBytes is chat.max_message_bytes.
	MaxMessageBytes int
	// MessagesPageSize is chat.messages_page_size.
	MessagesPageSize int
	// MaxDMParticipants is chat.max_dm_participants.
	MaxDMParticipants int
	// MaxReactionsPerMessage is chat.max_reactions_per_message.
	MaxReactionsPerMessage int
	// SearchPageSize is chat.search_page_size.
	SearchPageSize int
	// SearchQueryMaxChars is chat.search_query_max_chars.
	SearchQueryMaxChars int
	// SearchExcerptWords is chat.search_excerpt_words.
	SearchExcerptWords int
	// MembersPageSize is chat.members_page_size.
	MembersPageSize int
}

// ConfigFrom reads the chat keys from cfg; parse errors are collected in cfg
// (config.Config.Err) like those of every other key.
func ConfigFrom(cfg *config.Config) Config {
	return Config{
		MaxMessageBytes:        int(min(cfg.Bytes(KeyMaxMessageBytes), int64(maxInt))),
		MessagesPageSize:       cfg.Int(KeyMessagesPageSize),
		MaxDMParticipants:      cfg.Int(KeyMaxDMParticipants),
		MaxReactionsPerMessage: cfg.Int(KeyMaxReactionsPerMessage),
		SearchPageSize:         cfg.Int(KeySearchPageSize),
		SearchQueryMaxChars:    cfg.Int(KeySearchQueryMaxChars),
		SearchExcerptWords:     cfg.Int(KeySearchExcerptWords),
		MembersPageSize:        cfg.Int(KeyMembersPageSize),
	}
}

// maxInt caps a configured byte count to what an int holds on every platform Go supports.
const maxInt = 1<<31 - 1

// Validate refuses a message limit below 1 byte, a page size below 1, a direct-message limit
// below 2 (the actor and one other), a reaction limit below 1, and search bounds below their
// minimum (a page and a query of 1, an excerpt of 2 words), and a members page below 1.
func (c Config) Validate() error {
	switch {
	case c.MaxMessageBytes < 1:
		return fmt.Errorf("chat: %s is %d, want at least 1", KeyMaxMessageBytes.Name, c.MaxMessageBytes)
	case c.MessagesPageSize < 1:
		return fmt.Errorf("chat: %s is %d, want at least 1", KeyMessagesPageSize.Name, c.MessagesPageSize)
	case c.MaxDMParticipants < 2:
		return fmt.Errorf("chat: %s is %d, want at least 2", KeyMaxDMParticipants.Name, c.MaxDMParticipants)
	case c.MaxReactionsPerMessage < 1:
		return fmt.Errorf("chat: %s is %d, want at least 1", KeyMaxReactionsPerMessage.Name, c.MaxReactionsPerMessage)
	case c.SearchPageSize < 1:
		return fmt.Errorf("chat: %s is %d, want at least 1", KeySearchPageSize.Name, c.SearchPageSize)
	case c.SearchQueryMaxChars < 1:
		return fmt.Errorf("chat: %s is %d, want at least 1", KeySearchQueryMaxChars.Name, c.SearchQueryMaxChars)
	case c.SearchExcerptWords < 2:
		return fmt.Errorf("chat: %s is %d, want at least 2", KeySearchExcerptWords.Name, c.SearchExcerptWords)
	case c.MembersPageSize < 1:
		return fmt.Errorf("chat: %s is %d, want at least 1", KeyMembersPageSize.Name, c.MembersPageSize)
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
