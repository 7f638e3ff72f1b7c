package syncbench

import (
	"context"
	_ "embed" // the world's seeding SQL
	"encoding/json"
	"fmt"
	"net/http"
	gosync "sync"
	"sync/atomic"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/internal/kernel/ids"
	syncapp "bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/wire"
)

var (
	//go:embed queries/seed_sync_threads.sql
	seedSyncThreads string
	//go:embed queries/seed_sync_event_log.sql
	seedSyncEventLog string
	//go:embed queries/seed_sync_thread_counters.sql
	seedSyncThreadCounters string
	//go:embed queries/seed_sync_read_states.sql
	seedSyncReadStates string
	//go:embed queries/seed_sync_mentions.sql
	seedSyncMentions string
	//go:embed queries/seed_sync_vacuum.sql
	seedSyncVacuum string
)

// The shape of the sync world (the catch-up and snapshot cases).
const (
	// ChannelsPerSpace is how many of the world's channels lie in each space.
	ChannelsPerSpace = 100
	// ThreadsPerChannel is how many threads each channel has.
	ThreadsPerChannel = 10
	// PageShare is the share of channels the partial catch-up reader (Sam) sees: every tenth.
	PageShare = 10
	// snapshotShare is the share of channels the snapshot's person (Sam again, with more grants)
	// sees: every other one.
	snapshotShare = 2
	// setupWorkers is how many HTTP clients create the channels and grants at once.
	setupWorkers = 4
	// mentionContent is the text of the messages that mention Sam.
	mentionContent = "@sam, can you look at this one?"
)

// The threads of a channel the snapshot's person has read: the first readThreads to the end,
// the next partialThreads up to partialUnread messages before the end, the rest never. So
// threadsPerChannel - readThreads threads of each visible channel are unread, and the first
// never-read one has an unread mention of the person in its newest message.
const (
	readThreads    = 6
	partialThreads = 2
	partialUnread  = 3
	// UnreadPerChannel is how many threads of each of the snapshot person's channels are unread.
	UnreadPerChannel = ThreadsPerChannel - readThreads
)

// Person is a principal of the sync world with a token.
type Person struct {
	Name  string
	ID    uuid.UUID
	Token string
}

// SyncWorld is what buildSyncWorld made: the served App's address, the people, the structure
// and the extent of the generated log.
type SyncWorld struct {
	Base              string
	Alex, Sam, robin  Person
	Spaces            []uuid.UUID
	Channels          []uuid.UUID // channel i lies in spaces[i/channelsPerSpace]
	Threads           []uuid.UUID // threads[i*threadsPerChannel+j] is thread j of channel i
	generatedFrom     int64       // the generated events are the seqs generatedFrom+1 ..
	generatedThrough  int64
	head              int64 // the head after the world was built
	samPageChannels   int   // channels Sam sees during catch-up
	robinChannels     int
	SnapshotChannels  int // channels Sam sees once grown for the snapshot
	snapshotMentioned int // threads with an unread mention of Sam
	pageSize          int // sync.catchup_page_size
	scanWindow        int // sync.catchup_scan_window
}

// syncSize is how big the sync world is.
type syncSize struct {
	events   int // generated events (thread.created and message.created)
	channels int
}

// buildSyncWorld builds the world on app, served at base, through its use cases where they
// are fast enough and bulk SQL where they are not:
//   - through the use cases over HTTP (each a request with its transaction and events, as a
//     client would make them): the owner Alex (bootstrapped), Sam and Robin, the spaces, the
//     channels, Sam's member grants on every tenth channel and Robin's on one, an agent, and
//     three feature flags (the App's DefineFlag);
//   - in bulk SQL through bare: the threads (threadsPerChannel per channel) and the event log
//     (size.events events: a thread.created per thread, then message.created events spread
//     over the threads by a hash of their number), with the event_seq counter advanced in the
//     same transaction and the threads' last_message_seq set from the log.
//
// Then it vacuums and analyzes what it wrote in bulk.
func buildSyncWorld(ctx context.Context, app *wire.App, bare *pgxpool.Pool, base string, size syncSize, cfg syncapp.CatchUpConfig, progress func(string, ...any)) (*SyncWorld, error) {
	if size.channels < PageShare || size.events < size.channels*ThreadsPerChannel {
		return nil, fmt.Errorf("sync world: want at least %d channels and an event per thread", PageShare)
	}
	w := &SyncWorld{Base: base, pageSize: cfg.PageSize, scanWindow: cfg.ScanWindow}
	progress("sync world: people, %d spaces, %d channels and the grants over HTTP", max(1, size.channels/ChannelsPerSpace), size.channels)
	ownerID, ownerToken, err := app.Ports().Owners.Bootstrap(ctx, "Alex", "alex", "alex@example.com")
	if err != nil {
		return nil, fmt.Errorf("sync world: bootstrap the owner: %w", err)
	}
	w.Alex = Person{Name: "Alex", ID: ownerID, Token: ownerToken.Reveal()}
	c := bench.NewPostClient()
	defer c.CloseIdleConnections()
	for _, p := range []struct {
		dst          *Person
		name, handle string
	}{{&w.Sam, "Sam", "sam"}, {&w.robin, "Robin", "robin"}} {
		if *p.dst, err = w.CreatePerson(ctx, app, c, p.name, p.handle); err != nil {
			return nil, err
		}
	}
	for i := range max(1, size.channels/ChannelsPerSpace) {
		id, err := w.Create(ctx, c, "/api/v1/spaces", map[string]string{"name": fmt.Sprintf("Space %02d", i+1)})
		if err != nil {
			return nil, fmt.Errorf("sync world: create a space: %w", err)
		}
		w.Spaces = append(w.Spaces, id)
	}
	w.Channels = make([]uuid.UUID, size.channels)
	err = Parallel(ctx, size.channels, func(ctx context.Context, c *http.Client, i int) error {
		space := w.SpaceOf(i)
		id, err := w.Create(ctx, c, "/api/v1/spaces/"+space.String()+"/channels", map[string]string{"name": fmt.Sprintf("channel-%04d", i+1)})
		w.Channels[i] = id
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sync world: create the channels: %w", err)
	}
	var pageGrants []int
	for i := range size.channels {
		if i%PageShare == 0 {
			pageGrants = append(pageGrants, i)
		}
	}
	if err := w.Grant(ctx, w.Sam, pageGrants); err != nil {
		return nil, err
	}
	if err := w.Grant(ctx, w.robin, []int{1}); err != nil {
		return nil, err
	}
	w.samPageChannels, w.robinChannels = len(pageGrants), 1
	if _, err := w.Create(ctx, c, "/api/v1/agents", map[string]string{
		"display_name": "Helper", "handle": "helper", "description": "Summarises long threads on request.",
	}); err != nil {
		return nil, fmt.Errorf("sync world: create the agent: %w", err)
	}
	for _, f := range []struct {
		key string
		on  bool
	}{{"threads.summaries", true}, {"sidebar.sections", true}, {"search.semantic", false}} {
		if _, err := app.Ports().Flags.Define(ctx, f.key, "A flag of the benchmark world.", f.on); err != nil {
			return nil, fmt.Errorf("sync world: define flag %s: %w", f.key, err)
		}
	}

	progress("sync world: %d threads and %d events in bulk SQL", size.channels*ThreadsPerChannel, size.events)
	if err := w.seedLog(ctx, bare, size.events); err != nil {
		return nil, err
	}
	if w.head, err = app.Versions().EventSeq(ctx); err != nil {
		return nil, fmt.Errorf("sync world: head: %w", err)
	}
	return w, nil
}

// seedLog writes the threads and the generated log (see buildSyncWorld) and vacuums.
func (w *SyncWorld) seedLog(ctx context.Context, bare *pgxpool.Pool, events int) error {
	n := len(w.Channels) * ThreadsPerChannel
	w.Threads = make([]uuid.UUID, n)
	channels, spaces := make([]uuid.UUID, n), make([]uuid.UUID, n)
	for i := range n {
		w.Threads[i] = ids.New()
		channels[i] = w.Channels[i/ThreadsPerChannel]
		spaces[i] = w.SpaceOf(i / ThreadsPerChannel)
	}
	if _, err := bare.Exec(ctx, seedSyncThreads, w.Threads, channels, spaces, w.Alex.ID); err != nil {
		return fmt.Errorf("sync world: seed the threads: %w", err)
	}
	tx, err := bare.Begin(ctx)
	if err != nil {
		return fmt.Errorf("sync world: begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var last int64
	if err := tx.QueryRow(ctx, bench.BareCounterAdvance, events).Scan(&last); err != nil {
		return fmt.Errorf("sync world: advance the counter: %w", err)
	}
	w.generatedFrom, w.generatedThrough = last-int64(events), last
	if _, err := tx.Exec(ctx, seedSyncEventLog, w.generatedFrom, events, w.Threads, channels, spaces, w.Alex.ID); err != nil {
		return fmt.Errorf("sync world: generate the log: %w", err)
	}
	if _, err := tx.Exec(ctx, seedSyncThreadCounters, w.generatedFrom, w.generatedThrough); err != nil {
		return fmt.Errorf("sync world: thread counters: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("sync world: commit the log: %w", err)
	}
	if _, err := bare.Exec(ctx, seedSyncVacuum); err != nil {
		return fmt.Errorf("sync world: vacuum: %w", err)
	}
	return nil
}

// growForSnapshot makes Sam the snapshot's person: member grants on every other channel
// (over HTTP, as the catch-up cases left him with every tenth), then his personal data: the
// read states and the mentions in bulk SQL (the use cases would take a transaction and an
// event for each of thousands), the sidebar, three settings and four drafts through the use
// cases over HTTP as Sam.
func (w *SyncWorld) growForSnapshot(ctx context.Context, bare *pgxpool.Pool, progress func(string, ...any)) error {
	var more, visible []int
	for i := range w.Channels {
		if i%snapshotShare != 0 {
			continue
		}
		visible = append(visible, i)
		if i%PageShare != 0 {
			more = append(more, i)
		}
	}
	progress("snapshot: %d more grants for Sam over HTTP, his read states and mentions in bulk SQL", len(more))
	if err := w.Grant(ctx, w.Sam, more); err != nil {
		return err
	}
	var (
		readIDs    []uuid.UUID
		unread     []int64
		mentionIDs []uuid.UUID
	)
	for _, i := range visible {
		for j := range ThreadsPerChannel {
			t := w.Threads[i*ThreadsPerChannel+j]
			switch {
			case j < readThreads:
				readIDs, unread = append(readIDs, t), append(unread, 0)
			case j < readThreads+partialThreads:
				readIDs, unread = append(readIDs, t), append(unread, partialUnread)
			case j == readThreads+partialThreads:
				mentionIDs = append(mentionIDs, t)
			}
		}
	}
	if _, err := bare.Exec(ctx, seedSyncReadStates, w.Sam.ID, readIDs, unread); err != nil {
		return fmt.Errorf("snapshot: seed the read states: %w", err)
	}
	if _, err := bare.Exec(ctx, seedSyncMentions, mentionIDs, w.Sam.ID, w.Alex.ID, mentionContent); err != nil {
		return fmt.Errorf("snapshot: seed the mentions: %w", err)
	}
	if _, err := bare.Exec(ctx, seedSyncVacuum); err != nil {
		return fmt.Errorf("snapshot: vacuum: %w", err)
	}
	w.SnapshotChannels, w.snapshotMentioned = len(visible), len(mentionIDs)

	c := bench.NewPostClient()
	defer c.CloseIdleConnections()
	favourites, watched := []string{}, []string{}
	for k, i := range visible {
		switch {
		case k < 10:
			favourites = append(favourites, w.Channels[i].String())
		case k < 50:
			watched = append(watched, w.Channels[i].String())
		}
	}
	sidebar := map[string]any{"sections": []map[string]any{
		{"key": "favourites", "title": "Favourites", "collapsed": false, "channel_ids": favourites},
		{"key": "watched", "title": "Watched", "collapsed": true, "channel_ids": watched},
	}}
	if err := w.put(ctx, c, w.Sam, "/api/v1/me/sidebar", sidebar); err != nil {
		return fmt.Errorf("snapshot: sidebar: %w", err)
	}
	for key, value := range map[string]any{"theme": "dark", "notifications.desktop": true, "locale": "en-GB"} {
		if err := w.put(ctx, c, w.Sam, "/api/v1/me/settings/"+key, map[string]any{"value": value}); err != nil {
			return fmt.Errorf("snapshot: setting %s: %w", key, err)
		}
	}
	for k := range min(4, len(visible)) {
		i := visible[k]
		body := map[string]any{"content_md": "Half a reply to Robin"}
		if k%2 == 1 {
			body["thread_id"] = w.Threads[i*ThreadsPerChannel]
		}
		if err := w.put(ctx, c, w.Sam, "/api/v1/channels/"+w.Channels[i].String()+"/draft", body); err != nil {
			return fmt.Errorf("snapshot: draft: %w", err)
		}
	}
	return nil
}

// SpaceOf returns the space of channel i.
func (w *SyncWorld) SpaceOf(i int) uuid.UUID {
	return w.Spaces[min(i/ChannelsPerSpace, len(w.Spaces)-1)]
}

// CreatePerson creates a person over HTTP as Alex and issues a token for it.
func (w *SyncWorld) CreatePerson(ctx context.Context, app *wire.App, c *http.Client, name, handle string) (Person, error) {
	id, err := w.Create(ctx, c, "/api/v1/people", map[string]string{
		"display_name": name, "handle": handle, "email": handle + "@example.com",
	})
	if err != nil {
		return Person{}, fmt.Errorf("sync world: create %s: %w", name, err)
	}
	tok, err := app.Ports().Tokens.Issue(ctx, id, nil)
	if err != nil {
		return Person{}, fmt.Errorf("sync world: token for %s: %w", name, err)
	}
	return Person{Name: name, ID: id, Token: tok.Token.Reveal()}, nil
}

// Grant gives p a member grant on each channel of indexes, over HTTP as Alex.
func (w *SyncWorld) Grant(ctx context.Context, p Person, indexes []int) error {
	err := Parallel(ctx, len(indexes), func(ctx context.Context, c *http.Client, k int) error {
		_, err := w.Create(ctx, c, "/api/v1/grants", map[string]string{
			"principal_id": p.ID.String(), "resource_kind": "channel",
			"resource_id": w.Channels[indexes[k]].String(), "role": "member",
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("sync world: grants of %s: %w", p.Name, err)
	}
	return nil
}

// Create POSTs body to path as Alex and returns the id of what was created.
func (w *SyncWorld) Create(ctx context.Context, c *http.Client, path string, body any) (uuid.UUID, error) {
	return bench.CreateID(ctx, c, w.Base+path, w.Alex.Token, body)
}

// put PUTs body to path as p and expects 200.
func (w *SyncWorld) put(ctx context.Context, c *http.Client, p Person, path string, body any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	_, err = bench.Call(ctx, c, http.MethodPut, w.Base+path, p.Token, raw, http.StatusOK)
	return err
}

// Parallel runs fn for 0 .. n-1 on setupWorkers goroutines, each with an HTTP client of its
// own, and returns the first error.
func Parallel(ctx context.Context, n int, fn func(context.Context, *http.Client, int) error) error {
	var (
		next     atomic.Int64
		wg       gosync.WaitGroup
		errOnce  gosync.Once
		firstErr error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range setupWorkers {
		wg.Go(func() {
			c := bench.NewPostClient()
			defer c.CloseIdleConnections()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, c, i); err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}
