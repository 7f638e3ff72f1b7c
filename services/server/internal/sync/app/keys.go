package app

import (
	"fmt"
	"time"

	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/sync/domain"
)

// Configuration keys of the log tail, of the maintenance role and of the personal data; wire
// reads them.
var (
	// KeyTailPollInterval is the tail's fallback when notifications are lost or the listener
	// is reconnecting: the longest a live event waits then. Short enough to be a tolerable
	// delay, long enough that an idle process costs the database one cheap query per interval.
	KeyTailPollInterval = config.Define("sync.tail_poll_interval", config.KindDuration, "1s",
		"how long the log tail waits without a notification before it reads the log anyway")
	// KeyTailRetryBase is the tail's first wait after a failed read or a lost listener
	// connection; the waits double up to KeyTailRetryCap.
	KeyTailRetryBase = config.Define("sync.tail_retry_base", config.KindDuration, "100ms",
		"first wait of the log tail after a failed read or a lost listener connection; the waits double up to sync.tail_retry_cap (more than 0)")
	// KeyTailRetryCap caps the doubling waits, so the tail reconnects soon after PostgreSQL is
	// back without hammering it while it is down.
	KeyTailRetryCap = config.Define("sync.tail_retry_cap", config.KindDuration, "5s",
		"longest wait of the log tail between two attempts to read the log or reconnect its listener (at least sync.tail_retry_base)")
	// KeyTailBatchSize bounds one read of the tail and so the memory one batch holds in
	// every subscriber's buffer.
	KeyTailBatchSize = config.Define("sync.tail_batch_size", config.KindInt, "500",
		"most events the log tail reads in one query and hands to subscribers as one batch")
	// KeyMaintenanceInterval paces the maintenance role: partitions are created
	// sync.partitions_ahead intervals ahead, so an hourly run has ample margin.
	KeyMaintenanceInterval = config.Define("sync.maintenance_interval", config.KindDuration, "1h",
		"how often the maintenance role of bothy serve runs the partition upkeep of the event log")
	// KeyMaxSettingBytes bounds one setting's value as stored (compact JSON): settings are
	// preferences clients keep small, and every snapshot carries all of them.
	KeyMaxSettingBytes = config.Define("sync.max_setting_bytes", config.KindBytes, "16384",
		"most bytes of one personal setting's value as stored (compact JSON); a larger value is refused with validation_failed (at least 1)")
	// KeyMaxDraftBytes bounds a draft's text; the default equals chat.max_message_bytes, so
	// every draft can be sent as a message.
	KeyMaxDraftBytes = config.Define("sync.max_draft_bytes", config.KindBytes, "16384",
		"most bytes of one draft's Markdown text; a longer draft is refused with validation_failed (at least 1)")
	// KeyMaxSidebarSections bounds the sections of one sidebar, which every snapshot and
	// sidebar.updated event carries whole.
	KeyMaxSidebarSections = config.Define("sync.max_sidebar_sections", config.KindInt, "50",
		"most sections of one principal's sidebar; putSidebar with more is refused with validation_failed (at least 1)")
	// KeyMaxSidebarChannels bounds the channel ids of one sidebar in all its sections, for the
	// same reason.
	KeyMaxSidebarChannels = config.Define("sync.max_sidebar_channels", config.KindInt, "1000",
		"most channel ids of one principal's sidebar in all its sections, counted after duplicates within a section are dropped; putSidebar with more is refused with validation_failed (at least 1)")
	// KeySnapshotParallelism bounds the parts of one snapshot build read at once, each on a pool
	// connection of its own (sync/app partGroup): enough to keep the build as long as its
	// longest chain of parts, few enough that a reconnect storm leaves most of the pool
	// (database.max_conns) to the rest of the API.
	KeySnapshotParallelism = config.Define("sync.snapshot_parallelism", config.KindInt, "4",
		"most parts of one getSnapshot build read at once, each on a database connection of its own (at least 2: the build's two chains of parts wait for each other)")
)

// PersonalConfig is what the personal-data use cases read from the configuration.
type PersonalConfig struct {
	// MaxSettingBytes is sync.max_setting_bytes.
	MaxSettingBytes int64
	// MaxDraftBytes is sync.max_draft_bytes.
	MaxDraftBytes int64
	// Sidebar holds sync.max_sidebar_sections and sync.max_sidebar_channels.
	Sidebar domain.SidebarLimits
}

// PersonalConfigFrom reads the personal-data keys from cfg; parse errors are collected in cfg
// (config.Config.Err) like those of every other key.
func PersonalConfigFrom(cfg *config.Config) PersonalConfig {
	return PersonalConfig{
		MaxSettingBytes: cfg.Bytes(KeyMaxSettingBytes),
		MaxDraftBytes:   cfg.Bytes(KeyMaxDraftBytes),
		Sidebar: domain.SidebarLimits{
			Sections: cfg.Int(KeyMaxSidebarSections),
			Channels: cfg.Int(KeyMaxSidebarChannels),
		},
	}
}

// Validate refuses a limit below 1 byte, which would refuse every setting or draft, and a
// sidebar limit below 1.
func (c PersonalConfig) Validate() error {
	switch {
	case c.Sidebar.Sections < 1:
		return fmt.Errorf("sync: %s is %d, want at least 1", KeyMaxSidebarSections.Name, c.Sidebar.Sections)
	case c.Sidebar.Channels < 1:
		return fmt.Errorf("sync: %s is %d, want at least 1", KeyMaxSidebarChannels.Name, c.Sidebar.Channels)
	case c.MaxSettingBytes < 1:
		return fmt.Errorf("sync: %s is %d, want at least 1", KeyMaxSettingBytes.Name, c.MaxSettingBytes)
	case c.MaxDraftBytes < 1:
		return fmt.Errorf("sync: %s is %d, want at least 1", KeyMaxDraftBytes.Name, c.MaxDraftBytes)
	}
	return nil
}

// Configuration keys of catch-up (app.CatchUp); CatchUpConfigFrom reads them.
var (
	// KeyCatchUpPageSize is the default and the cap of a catch-up page's limit: it bounds the
	// memory and the response size of one page.
	KeyCatchUpPageSize = config.Define("sync.catchup_page_size", config.KindInt, "500",
		"default and largest number of events in one catch-up page (listEvents limit, the gateway's resume); at least 1")
	// KeyCatchUpScanWindow bounds the seqs one page reads, whatever the reader may see, so a
	// reader who sees one channel pays per page about what a reader who sees everything pays
	// (a few times the page size keeps the unfiltered rows' cost near the delivered rows').
	KeyCatchUpScanWindow = config.Define("sync.catchup_scan_window", config.KindInt, "5000",
		"most seqs of the event log one catch-up page reads; a page that reaches it ends short, with next_cursor below head_seq, and the client keeps paging (at least 1)")
	// KeyCatchUpMaxEvents is where a snapshot becomes cheaper than catching up.
	KeyCatchUpMaxEvents = config.Define("sync.catchup_max_events", config.KindInt, "1000000",
		"a cursor more than this many seqs behind the head answers resync_required with reason too_far_behind (at least 1)")
	// KeyResyncRetryBase spreads the clients that one resync_required reaches at once (a
	// restore tells every client): they wait this, plus or minus half of it.
	KeyResyncRetryBase = config.Define("sync.resync_retry_base", config.KindDuration, "1s",
		"retry_after_ms of resync_required: this duration with a random jitter of plus or minus half of it (more than 0)")
)

// CatchUpConfig is what catch-up reads from the configuration.
type CatchUpConfig struct {
	// PageSize is sync.catchup_page_size.
	PageSize int
	// ScanWindow is sync.catchup_scan_window.
	ScanWindow int
	// MaxEvents is sync.catchup_max_events.
	MaxEvents int
	// RetryBase is sync.resync_retry_base.
	RetryBase time.Duration
}

// CatchUpConfigFrom reads the catch-up keys from cfg; parse errors are collected in cfg
// (config.Config.Err) like those of every other key.
func CatchUpConfigFrom(cfg *config.Config) CatchUpConfig {
	return CatchUpConfig{
		PageSize:   cfg.Int(KeyCatchUpPageSize),
		ScanWindow: cfg.Int(KeyCatchUpScanWindow),
		MaxEvents:  cfg.Int(KeyCatchUpMaxEvents),
		RetryBase:  cfg.Duration(KeyResyncRetryBase),
	}
}

// Validate refuses a page size, scan window or maximum below 1, which would stop every
// catch-up, and a retry base that is not positive, which would remove the jitter.
func (c CatchUpConfig) Validate() error {
	switch {
	case c.PageSize < 1:
		return fmt.Errorf("sync: %s is %d, want at least 1", KeyCatchUpPageSize.Name, c.PageSize)
	case c.ScanWindow < 1:
		return fmt.Errorf("sync: %s is %d, want at least 1", KeyCatchUpScanWindow.Name, c.ScanWindow)
	case c.MaxEvents < 1:
		return fmt.Errorf("sync: %s is %d, want at least 1", KeyCatchUpMaxEvents.Name, c.MaxEvents)
	case c.RetryBase <= 0:
		return fmt.Errorf("sync: %s is %v, want more than 0", KeyResyncRetryBase.Name, c.RetryBase)
	}
	return nil
}
