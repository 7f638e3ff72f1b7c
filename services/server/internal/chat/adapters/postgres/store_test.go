package postgres_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/internal/chat"
	chatpg "bothy.example.com/server/internal/chat/adapters/postgres"
	"bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/chat/domain"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/pgtest"
)

var (
	start = time.Date(2026, 12, 1, 9, 30, 15, 0, time.UTC)

	alex  = uuid.MustParse("01938d2a-7c00-7a01-8000-000000000001")
	sam   = uuid.MustParse("01938d2a-7c00-7a01-8000-000000000002")
	robin = uuid.MustParse("01938d2a-7c00-7a01-8000-000000000003")
)

// env is one test's database with the store over it.
type env struct {
	pool   *pgxpool.Pool
	runner *tx.Runner
	store  *chatpg.Store
}

func newEnv(t *testing.T) env {
	t.Helper()
	pool := pgtest.New(t)
	runner := tx.NewRunner(pool)
	return env{pool: pool, runner: runner, store: chatpg.New(runner)}
}

func (e env) space(t *testing.T, name string) chat.Space {
	t.Helper()
	sp, err := domain.NewSpace(ids.New(), chat.SpaceInput{Name: name}, start)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.InsertSpace(t.Context(), sp); err != nil {
		t.Fatalf("InsertSpace: %v", err)
	}
	return sp
}

func (e env) channel(t *testing.T, space uuid.UUID, name string) chat.Channel {
	t.Helper()
	c, err := domain.NewChannel(ids.New(), chat.ChannelInput{SpaceID: space, Name: name}, start)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.InsertChannel(t.Context(), c); err != nil {
		t.Fatalf("InsertChannel %s: %v", name, err)
	}
	return c
}

// thread stores a thread with its first message (seq 1) mentioning mentions.
func (e env) thread(t *testing.T, c chat.Channel, mentions ...uuid.UUID) (chat.Thread, chat.Message) {
	t.Helper()
	th, m, err := domain.NewThread(ids.New(), ids.New(), c, alex, chat.ThreadInput{ChannelID: c.ID, Title: "Plan", ContentMD: "first"}, mentions, 1024, start)
	if err != nil {
		t.Fatal(err)
	}
	err = e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
		if err := e.store.InsertThread(ctx, th); err != nil {
			return err
		}
		return e.store.InsertMessage(ctx, m)
	})
	if err != nil {
		t.Fatalf("insert thread: %v", err)
	}
	return th, m
}

// post stores the thread's next message as the use case does (PostMessage), in one
// transaction, and returns it with the seq and time the store gave it.
func (e env) post(ctx context.Context, threadID, author uuid.UUID, text, key string, mentions ...uuid.UUID) (chat.Message, error) {
	var m chat.Message
	err := e.runner.RunInTx(ctx, func(ctx context.Context) error {
		m = domain.NewMessage(ids.New(), chat.Thread{ID: threadID}, author, chat.MessageInput{ThreadID: threadID, ContentMD: text, ExternalKey: key}, mentions, start)
		p, err := e.store.PostMessage(ctx, m)
		if err != nil {
			return err
		}
		m.Seq, m.CreatedAt, m.ChannelID, m.SpaceID = p.Thread.LastMessageSeq, p.CreatedAt, p.Thread.ChannelID, p.Thread.SpaceID
		return nil
	})
	return m, err
}

func TestSpaces(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	sp, err := domain.NewSpace(ids.New(), chat.SpaceInput{Name: "Support", Description: "Help for Sam"}, start)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.InsertSpace(ctx, sp); err != nil {
		t.Fatalf("InsertSpace: %v", err)
	}
	got, err := e.store.Space(ctx, sp.ID)
	if err != nil || got != sp {
		t.Fatalf("Space = %+v, %v; want %+v", got, err, sp)
	}
	if _, err := e.store.Space(ctx, uuid.New()); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("Space unknown = %v", err)
	}
	marketing, zeta, old := e.space(t, "Marketing"), e.space(t, "zeta"), e.space(t, "Old")

	err = e.runner.RunInTx(ctx, func(ctx context.Context) error {
		_, err := e.store.UpdateSpace(ctx, old.ID, func(s *chat.Space) (bool, error) {
			return domain.Archive(&s.ArchivedAt, &s.Version, start.Add(time.Hour)), nil
		})
		return err
	})
	if err != nil {
		t.Fatalf("UpdateSpace: %v", err)
	}
	if got, _ := e.store.Space(ctx, old.ID); !got.ArchivedAt.Equal(start.Add(time.Hour)) || got.Version != 2 {
		t.Fatalf("archived space = %+v", got)
	}
	// A change that reports none writes nothing; an error of change is returned as is.
	errNo := errors.New("no")
	err = e.runner.RunInTx(ctx, func(ctx context.Context) error {
		if _, err := e.store.UpdateSpace(ctx, sp.ID, func(s *chat.Space) (bool, error) { s.Name = "Lost"; return false, nil }); err != nil {
			return err
		}
		_, err := e.store.UpdateSpace(ctx, sp.ID, func(*chat.Space) (bool, error) { return true, errNo })
		return err
	})
	if !errors.Is(err, errNo) {
		t.Fatalf("UpdateSpace with a failing change = %v", err)
	}
	if got, _ := e.store.Space(ctx, sp.ID); got.Name != "Support" {
		t.Fatalf("unchanged space stored as %+v", got)
	}
	if err := e.runner.RunInTx(ctx, func(ctx context.Context) error {
		_, err := e.store.UpdateSpace(ctx, uuid.New(), func(*chat.Space) (bool, error) { return true, nil })
		return err
	}); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("UpdateSpace unknown = %v", err)
	}

	names := func(f app.SpaceFilter) []string {
		t.Helper()
		list, err := e.store.Spaces(ctx, f)
		if err != nil {
			t.Fatalf("Spaces: %v", err)
		}
		var out []string
		for _, s := range list {
			out = append(out, s.Name)
		}
		return out
	}
	if got := names(app.SpaceFilter{All: true}); !slices.Equal(got, []string{"Marketing", "Support", "zeta"}) {
		t.Errorf("every space = %v, want byte order without the archived one", got)
	}
	if got := names(app.SpaceFilter{SpaceIDs: []uuid.UUID{zeta.ID, marketing.ID, old.ID}}); !slices.Equal(got, []string{"Marketing", "zeta"}) {
		t.Errorf("some spaces = %v", got)
	}
	if got := names(app.SpaceFilter{}); len(got) != 0 {
		t.Errorf("no spaces = %v", got)
	}

	for _, tc := range []struct {
		id   uuid.UUID
		want bool
	}{{sp.ID, true}, {old.ID, true}, {uuid.New(), false}} {
		if ok, err := e.store.SpaceExists(ctx, tc.id); err != nil || ok != tc.want {
			t.Errorf("SpaceExists(%s) = %v, %v; want %v", tc.id, ok, err, tc.want)
		}
	}
}

func TestChannels(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	sp, other, archivedSpace := e.space(t, "Support"), e.space(t, "Marketing"), e.space(t, "Old")
	general := e.channel(t, sp.ID, "general")
	if err := e.store.InsertChannel(ctx, chat.Channel{ID: ids.New(), SpaceID: sp.ID, Kind: chat.ChannelStandard, Name: "GENERAL", Version: 1, CreatedAt: start}); !errors.Is(err, domain.ErrChannelNameTaken) {
		t.Fatalf("taken name in another case = %v, want ErrChannelNameTaken", err)
	}
	e.channel(t, other.ID, "general") // another space: free
	random, news := e.channel(t, sp.ID, "random"), e.channel(t, other.ID, "news")
	hidden := e.channel(t, archivedSpace.ID, "hidden")
	if err := e.runner.RunInTx(ctx, func(ctx context.Context) error {
		_, err := e.store.UpdateSpace(ctx, archivedSpace.ID, func(s *chat.Space) (bool, error) {
			return domain.Archive(&s.ArchivedAt, &s.Version, start), nil
		})
		return err
	}); err != nil {
		t.Fatal(err)
	}

	got, err := e.store.Channel(ctx, general.ID)
	if err != nil || got.ID != general.ID || got.SpaceID != sp.ID || got.Kind != chat.ChannelStandard || got.Name != "general" ||
		got.ParticipantIDs != nil || got.Version != 1 || !got.CreatedAt.Equal(start) || !got.ArchivedAt.IsZero() {
		t.Fatalf("Channel = %+v, %v", got, err)
	}
	if _, err := e.store.Channel(ctx, uuid.New()); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("Channel unknown = %v", err)
	}

	// Archiving frees the name.
	if err := e.runner.RunInTx(ctx, func(ctx context.Context) error {
		_, err := e.store.UpdateChannel(ctx, general.ID, func(c *chat.Channel) (bool, error) {
			return domain.Archive(&c.ArchivedAt, &c.Version, start.Add(time.Hour)), nil
		})
		return err
	}); err != nil {
		t.Fatalf("UpdateChannel: %v", err)
	}
	if got, _ := e.store.Channel(ctx, general.ID); !got.ArchivedAt.Equal(start.Add(time.Hour)) || got.Version != 2 {
		t.Fatalf("archived channel = %+v", got)
	}
	second := e.channel(t, sp.ID, "General")
	if err := e.runner.RunInTx(ctx, func(ctx context.Context) error {
		_, err := e.store.UpdateChannel(ctx, uuid.New(), func(*chat.Channel) (bool, error) { return true, nil })
		return err
	}); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("UpdateChannel unknown = %v", err)
	}

	inSpace, err := e.store.ChannelsInSpace(ctx, sp.ID)
	if err != nil {
		t.Fatalf("ChannelsInSpace: %v", err)
	}
	if ids := channelIDs(inSpace); !slices.Equal(ids, []uuid.UUID{second.ID, random.ID}) {
		t.Fatalf("ChannelsInSpace = %v, want General and random (byte order, archived left out)", ids)
	}

	dm, created, err := e.store.InsertDirect(ctx, domain.NewDirect(ids.New(), []uuid.UUID{alex, sam}, start), domain.DirectKey([]uuid.UUID{alex, sam}))
	if err != nil || !created {
		t.Fatalf("InsertDirect = %v, %v", created, err)
	}
	groupSet := []uuid.UUID{alex, sam, robin}
	group, _, err := e.store.InsertDirect(ctx, domain.NewDirect(ids.New(), groupSet, start), domain.DirectKey(groupSet))
	if err != nil {
		t.Fatal(err)
	}
	got, err = e.store.Channel(ctx, group.ID)
	if err != nil || got.Kind != chat.ChannelDM || got.SpaceID != uuid.Nil || !slices.Equal(got.ParticipantIDs, groupSet) {
		t.Fatalf("direct message = %+v, %v", got, err)
	}

	list := func(f app.ChannelFilter) []uuid.UUID {
		t.Helper()
		cs, err := e.store.Channels(ctx, f)
		if err != nil {
			t.Fatalf("Channels: %v", err)
		}
		return channelIDs(cs)
	}
	sortedDMs := []uuid.UUID{dm.ID, group.ID}
	slices.SortFunc(sortedDMs, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	tests := []struct {
		name string
		f    app.ChannelFilter
		want []uuid.UUID
	}{
		{"instance-wide, no direct messages", app.ChannelFilter{All: true}, []uuid.UUID{second.ID, otherGeneral(t, e, other.ID), news.ID, random.ID}},
		{"one space", app.ChannelFilter{SpaceIDs: []uuid.UUID{sp.ID}}, []uuid.UUID{second.ID, random.ID}},
		{"one channel and robin's direct messages", app.ChannelFilter{ChannelIDs: []uuid.UUID{news.ID, general.ID, hidden.ID}, ParticipantID: robin}, []uuid.UUID{group.ID, news.ID}},
		{"sam's direct messages first", app.ChannelFilter{ChannelIDs: []uuid.UUID{random.ID}, ParticipantID: sam}, append(slices.Clone(sortedDMs), random.ID)},
		{"nothing", app.ChannelFilter{ParticipantID: uuid.New()}, nil},
	}
	for _, tc := range tests {
		if got := list(tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Channels = %v, want %v", tc.name, got, tc.want)
		}
	}

	spaces, err := e.store.SpacesOfChannels(ctx, []uuid.UUID{random.ID, news.ID, dm.ID, uuid.New()})
	if err != nil || len(spaces) != 2 || spaces[random.ID] != sp.ID || spaces[news.ID] != other.ID {
		t.Fatalf("SpacesOfChannels = %v, %v", spaces, err)
	}
	for _, tc := range []struct {
		id   uuid.UUID
		want bool
	}{{general.ID, true}, {dm.ID, true}, {uuid.New(), false}} {
		if ok, err := e.store.ChannelExists(ctx, tc.id); err != nil || ok != tc.want {
			t.Errorf("ChannelExists(%s) = %v, %v; want %v", tc.id, ok, err, tc.want)
		}
	}
}

func otherGeneral(t *testing.T, e env, space uuid.UUID) uuid.UUID {
	t.Helper()
	cs, err := e.store.ChannelsInSpace(t.Context(), space)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Name == "general" {
			return c.ID
		}
	}
	t.Fatalf("no general in %s", space)
	return uuid.Nil
}

func channelIDs(cs []chat.Channel) []uuid.UUID {
	var out []uuid.UUID
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

// TestOneDirectMessagePerSet: concurrent openers of the same set get one channel; every
// other set gets its own.
func TestOneDirectMessagePerSet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	set := []uuid.UUID{alex, sam}
	const openers = 6
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		got     []uuid.UUID
		created int
		errs    []error
	)
	for range openers {
		wg.Go(func() {
			var (
				c  chat.Channel
				ok bool
			)
			err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
				var err error
				c, ok, err = e.store.InsertDirect(ctx, domain.NewDirect(ids.New(), set, start), domain.DirectKey(set))
				return err
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			got = append(got, c.ID)
			if ok {
				created++
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("InsertDirect: %v", errs)
	}
	if created != 1 {
		t.Fatalf("%d openers created a channel, want 1", created)
	}
	for _, id := range got {
		if id != got[0] {
			t.Fatalf("openers got channels %v, want one", got)
		}
	}
	existing, err := e.store.Channel(t.Context(), got[0])
	if err != nil || !slices.Equal(existing.ParticipantIDs, set) {
		t.Fatalf("the direct message = %+v, %v", existing, err)
	}
	var n int
	if err := e.pool.QueryRow(t.Context(), `SELECT count(*) FROM chat.dm_participants`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("participant rows = %d, %v; want 2", n, err)
	}
}

func TestThreadsAndMessages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	sp := e.space(t, "Support")
	c := e.channel(t, sp.ID, "general")
	th, first := e.thread(t, c, robin, sam)

	got, err := e.store.Thread(ctx, th.ID)
	if err != nil || got != th {
		t.Fatalf("Thread = %+v, %v; want %+v", got, err, th)
	}
	if _, err := e.store.Thread(ctx, uuid.New()); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("Thread unknown = %v", err)
	}
	m, err := e.store.Message(ctx, first.ID)
	if err != nil || m.ID != first.ID || m.SpaceID != sp.ID || m.Seq != 1 || m.ContentMD != "first" ||
		!slices.Equal(m.MentionIDs, []uuid.UUID{sam, robin}) || !m.CreatedAt.Equal(start) || m.ExternalKey != "" {
		t.Fatalf("Message = %+v, %v", m, err)
	}
	if _, err := e.store.Message(ctx, uuid.New()); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("Message unknown = %v", err)
	}

	second, err := e.post(ctx, th.ID, sam, "second", "git:2")
	if err != nil || second.Seq != 2 {
		t.Fatalf("post = %+v, %v", second, err)
	}
	if _, err := e.post(ctx, th.ID, sam, "again", "git:2"); !errors.Is(err, chat.ErrDuplicateKey) {
		t.Fatalf("duplicate external key = %v, want ErrDuplicateKey", err)
	}
	if got, _ := e.store.Thread(ctx, th.ID); got.LastMessageSeq != 2 || got.Version != 2 {
		t.Fatalf("thread after a refused post = %+v, want the advance rolled back", got)
	}
	if _, err := e.post(ctx, uuid.New(), sam, "x", ""); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("post into an unknown thread = %v", err)
	}
	for _, text := range []string{"3", "4"} {
		if _, err := e.post(ctx, th.ID, alex, text, ""); err != nil {
			t.Fatal(err)
		}
	}
	page, err := e.store.Messages(ctx, th.ID, 1, 2)
	if err != nil || len(page) != 2 || page[0].Seq != 2 || page[1].Seq != 3 || page[0].ExternalKey != "git:2" {
		t.Fatalf("Messages(after 1, 2) = %+v, %v", page, err)
	}
	if page, err := e.store.Messages(ctx, th.ID, 4, 10); err != nil || len(page) != 0 {
		t.Fatalf("Messages(after 4) = %+v, %v", page, err)
	}

	// An edit replaces the mentions.
	err = e.runner.RunInTx(ctx, func(ctx context.Context) error {
		_, err := e.store.UpdateMessage(ctx, first.ID, func(m *chat.Message) (bool, error) {
			return true, domain.Edit(m, "edited", []uuid.UUID{alex}, start.Add(time.Minute))
		})
		return err
	})
	if err != nil {
		t.Fatalf("edit: %v", err)
	}
	if m, _ := e.store.Message(ctx, first.ID); m.ContentMD != "edited" || !slices.Equal(m.MentionIDs, []uuid.UUID{alex}) || !m.EditedAt.Equal(start.Add(time.Minute)) {
		t.Fatalf("edited message = %+v", m)
	}
	if err := e.runner.RunInTx(ctx, func(ctx context.Context) error {
		_, err := e.store.UpdateMessage(ctx, uuid.New(), func(*chat.Message) (bool, error) { return true, nil })
		return err
	}); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("UpdateMessage unknown = %v", err)
	}
}

// TestDeletingAMessageClearsItsContent: a redaction empties content_md and removes the
// mention rows, keeping the message's place (seq) and its external key.
func TestDeletingAMessageClearsItsContent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	c := e.channel(t, e.space(t, "Support").ID, "general")
	th, _ := e.thread(t, c)
	m, err := e.post(ctx, th.ID, sam, "a secret for @robin", "git:9", robin)
	if err != nil {
		t.Fatal(err)
	}
	err = e.runner.RunInTx(ctx, func(ctx context.Context) error {
		_, err := e.store.UpdateMessage(ctx, m.ID, func(m *chat.Message) (bool, error) {
			return domain.Redact(m, start.Add(time.Hour)), nil
		})
		return err
	})
	if err != nil {
		t.Fatalf("redact: %v", err)
	}
	got, err := e.store.Message(ctx, m.ID)
	if err != nil || got.ContentMD != "" || got.MentionIDs != nil || !got.RedactedAt.Equal(start.Add(time.Hour)) ||
		got.Seq != 2 || got.ExternalKey != "git:9" {
		t.Fatalf("redacted message = %+v, %v", got, err)
	}
	var stored string
	var mentions int
	if err := e.pool.QueryRow(ctx, `SELECT content_md, (SELECT count(*) FROM chat.mentions WHERE message_id = $1) FROM chat.messages WHERE id = $1`, m.ID).Scan(&stored, &mentions); err != nil {
		t.Fatal(err)
	}
	if stored != "" || mentions != 0 {
		t.Fatalf("stored content %q and %d mention rows, want none", stored, mentions)
	}
	// The schema refuses content on a redacted message.
	if _, err := e.pool.Exec(ctx, `UPDATE chat.messages SET content_md = 'back' WHERE id = $1`, m.ID); err == nil {
		t.Fatal("a redacted message took content again")
	}
}

// TestConcurrentPostersGetConsecutiveSeqs: eight posters into one thread, each in its own
// transaction, get the seqs 1..N without gap or duplicate (the UPDATE ... RETURNING row lock).
func TestConcurrentPostersGetConsecutiveSeqs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.channel(t, e.space(t, "Support").ID, "general")
	th := chat.Thread{ID: ids.New(), ChannelID: c.ID, SpaceID: c.SpaceID, CreatedBy: alex, CreatedAt: start, Version: 1}
	if err := e.store.InsertThread(t.Context(), th); err != nil {
		t.Fatal(err)
	}
	const posters, each = 8, 5
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seqs []int64
		errs []error
	)
	for i := range posters {
		wg.Go(func() {
			for range each {
				m, err := e.post(t.Context(), th.ID, []uuid.UUID{alex, sam, robin}[i%3], "hello", "")
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					seqs = append(seqs, m.Seq)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("posting: %v", errs)
	}
	slices.Sort(seqs)
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("seqs = %v, want 1..%d without gap or duplicate", seqs, posters*each)
		}
	}
	got, err := e.store.Thread(t.Context(), th.ID)
	if err != nil || got.LastMessageSeq != posters*each || got.Version != 1+posters*each {
		t.Fatalf("thread = %+v, %v", got, err)
	}
}

func TestPostMessageInAnArchivedChannelStoresNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	c := e.channel(t, e.space(t, "Support").ID, "general")
	th, _ := e.thread(t, c)
	if err := e.runner.RunInTx(ctx, func(ctx context.Context) error {
		_, err := e.store.UpdateChannel(ctx, c.ID, func(c *chat.Channel) (bool, error) {
			return domain.Archive(&c.ArchivedAt, &c.Version, start), nil
		})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	id := ids.New()
	err := e.runner.RunInTx(ctx, func(ctx context.Context) error {
		m := domain.NewMessage(id, th, alex, chat.MessageInput{ThreadID: th.ID, ContentMD: "late"}, nil, start)
		p, err := e.store.PostMessage(ctx, m)
		if err != nil {
			return err
		}
		if !p.ChannelArchived || p.Thread.LastMessageSeq != 2 || p.Thread.SpaceID != c.SpaceID {
			t.Errorf("posting = %+v, want seq 2 in an archived channel", p)
		}
		if _, err := e.store.Message(ctx, id); !errors.Is(err, problem.ErrNotFound) {
			t.Errorf("message in an archived channel: %v, want not stored", err)
		}
		return errors.New("roll back")
	})
	if err == nil {
		t.Fatal("expected the rollback")
	}
	if got, _ := e.store.Thread(ctx, th.ID); got.LastMessageSeq != 1 {
		t.Fatalf("rolled-back advance kept seq %d", got.LastMessageSeq)
	}
}

// TestPostMessageTimeNeverFalls: a message posted with an earlier time than the thread's last
// activity (a poster that took its time before another got the lock) gets the thread's last
// activity, so created_at never falls as seq rises; a later time is kept.
func TestPostMessageTimeNeverFalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	c := e.channel(t, e.space(t, "Support").ID, "general")
	th, first := e.thread(t, c)
	for _, tc := range []struct {
		at, want time.Time
	}{
		{first.CreatedAt.Add(time.Minute), first.CreatedAt.Add(time.Minute)},
		{first.CreatedAt, first.CreatedAt.Add(time.Minute)},
		{first.CreatedAt.Add(2 * time.Minute), first.CreatedAt.Add(2 * time.Minute)},
	} {
		var p app.Posting
		err := e.runner.RunInTx(ctx, func(ctx context.Context) error {
			var err error
			p, err = e.store.PostMessage(ctx, domain.NewMessage(ids.New(), th, alex, chat.MessageInput{ThreadID: th.ID, ContentMD: "next"}, nil, tc.at))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if !p.CreatedAt.Equal(tc.want) {
			t.Errorf("posted at %v: created_at %v, want %v", tc.at, p.CreatedAt, tc.want)
		}
	}
}

// TestMessageInvocationIsStored: the invocation a reply answers, posted with it, comes back
// from every read of the message (Message, Messages, LockMessage, SearchMessages); a message
// that answers none reads as uuid.Nil.
func TestMessageInvocationIsStored(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	c := e.channel(t, e.space(t, "Support").ID, "general")
	th, first := e.thread(t, c)
	invocation := ids.New()
	reply := domain.NewMessage(ids.New(), th, robin, chat.MessageInput{ThreadID: th.ID, ContentMD: "cartridge half full"}, nil, start)
	reply.InvocationID = invocation
	err := e.runner.RunInTx(ctx, func(ctx context.Context) error {
		_, err := e.store.PostMessage(ctx, reply)
		return err
	})
	if err != nil {
		t.Fatalf("PostMessage: %v", err)
	}
	want := map[uuid.UUID]uuid.UUID{first.ID: uuid.Nil, reply.ID: invocation}
	check := func(read string, m chat.Message, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", read, err)
		}
		if w, ok := want[m.ID]; !ok || m.InvocationID != w {
			t.Fatalf("%s: message %s answers %s, want %s", read, m.ID, m.InvocationID, w)
		}
	}
	for id := range want {
		m, err := e.store.Message(ctx, id)
		check("Message", m, err)
		err = e.runner.RunInTx(ctx, func(ctx context.Context) error {
			m, err = e.store.LockMessage(ctx, id)
			return err
		})
		check("LockMessage", m, err)
	}
	page, err := e.store.Messages(ctx, th.ID, 0, 10)
	if err != nil || len(page) != 2 {
		t.Fatalf("Messages = %d, %v", len(page), err)
	}
	for _, m := range page {
		check("Messages", m, nil)
	}
	rows, err := e.store.SearchMessages(ctx, app.SearchSpec{Text: "cartridge", Visible: app.SearchVisibility{All: true}, Limit: 10, ExcerptWords: 10})
	if err != nil || len(rows) != 1 {
		t.Fatalf("SearchMessages = %d rows, %v", len(rows), err)
	}
	check("SearchMessages", rows[0].Message, nil)
}

func TestCountersAndUnreadMentions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	sp := e.space(t, "Support")
	general, random, quiet := e.channel(t, sp.ID, "general"), e.channel(t, sp.ID, "random"), e.channel(t, sp.ID, "quiet")
	th1, _ := e.thread(t, general, sam) // seq 1 mentions sam
	th2, _ := e.thread(t, random)       // seq 1
	th3, _ := e.thread(t, general)      // seq 1, floor raised below
	empty := chat.Thread{ID: ids.New(), ChannelID: quiet.ID, SpaceID: sp.ID, CreatedBy: alex, CreatedAt: start, Version: 1}
	if err := e.store.InsertThread(ctx, empty); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := e.post(ctx, th1.ID, alex, "@sam", "", sam); err != nil { // seqs 2, 3
			t.Fatal(err)
		}
	}
	if _, err := e.post(ctx, th2.ID, alex, "@sam", "", sam); err != nil { // seq 2
		t.Fatal(err)
	}
	if _, err := e.post(ctx, th3.ID, alex, "@sam", "", sam); err != nil { // seq 2, at the floor
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, `UPDATE chat.threads SET unread_floor_seq = 2 WHERE id = $1`, th3.ID); err != nil {
		t.Fatal(err)
	}

	counters, err := e.store.ThreadCounters(ctx, []uuid.UUID{general.ID, quiet.ID})
	if err != nil {
		t.Fatalf("ThreadCounters: %v", err)
	}
	if len(counters) != 1 || counters[0] != (chat.ThreadCounter{ThreadID: th1.ID, ChannelID: general.ID, SpaceID: sp.ID, LastMessageSeq: 3, Version: 3}) {
		t.Fatalf("ThreadCounters = %+v, want th1 only (th3 is at its floor, the quiet thread empty)", counters)
	}

	counts, err := e.store.CountUnreadMentions(ctx, sam, []uuid.UUID{general.ID, random.ID}, map[uuid.UUID]int64{th1.ID: 2})
	if err != nil {
		t.Fatalf("CountUnreadMentions: %v", err)
	}
	if want := map[uuid.UUID]int{th1.ID: 1, th2.ID: 1}; !mapsEqual(counts, want) {
		t.Fatalf("CountUnreadMentions = %v, want %v", counts, want)
	}
	counts, err = e.store.CountUnreadMentions(ctx, sam, []uuid.UUID{general.ID}, nil)
	if err != nil || !mapsEqual(counts, map[uuid.UUID]int{th1.ID: 3}) {
		t.Fatalf("CountUnreadMentions without read states = %v, %v", counts, err)
	}
	if counts, err := e.store.CountUnreadMentions(ctx, robin, []uuid.UUID{general.ID}, nil); err != nil || len(counts) != 0 {
		t.Fatalf("CountUnreadMentions of robin = %v, %v", counts, err)
	}
}

func mapsEqual(a, b map[uuid.UUID]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestStoreReportsDatabaseFailures: every method returns the database's error (here a
// cancelled context), wrapped, and never a not-found for it.
func TestStoreReportsDatabaseFailures(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	id := uuid.New()
	change := func(*chat.Space) (bool, error) { return true, nil }
	calls := map[string]func() error{
		"InsertSpace": func() error {
			return e.store.InsertSpace(ctx, chat.Space{ID: id, Name: "x", Version: 1, CreatedAt: start})
		},
		"Space":       func() error { _, err := e.store.Space(ctx, id); return err },
		"Spaces":      func() error { _, err := e.store.Spaces(ctx, app.SpaceFilter{All: true}); return err },
		"UpdateSpace": func() error { _, err := e.store.UpdateSpace(ctx, id, change); return err },
		"InsertChannel": func() error {
			return e.store.InsertChannel(ctx, chat.Channel{ID: id, SpaceID: id, Name: "x", Version: 1, CreatedAt: start})
		},
		"InsertDirect": func() error {
			_, _, err := e.store.InsertDirect(ctx, domain.NewDirect(id, []uuid.UUID{alex, sam}, start), "k")
			return err
		},
		"Channel":         func() error { _, err := e.store.Channel(ctx, id); return err },
		"ChannelsInSpace": func() error { _, err := e.store.ChannelsInSpace(ctx, id); return err },
		"Channels":        func() error { _, err := e.store.Channels(ctx, app.ChannelFilter{All: true}); return err },
		"UpdateChannel": func() error {
			_, err := e.store.UpdateChannel(ctx, id, func(*chat.Channel) (bool, error) { return true, nil })
			return err
		},
		"InsertThread": func() error { return e.store.InsertThread(ctx, chat.Thread{ID: id, ChannelID: id, Version: 1}) },
		"Thread":       func() error { _, err := e.store.Thread(ctx, id); return err },
		"PostMessage": func() error {
			_, err := e.store.PostMessage(ctx, chat.Message{ID: id, ThreadID: id})
			return err
		},
		"ThreadCounters": func() error { _, err := e.store.ThreadCounters(ctx, []uuid.UUID{id}); return err },
		"InsertMessage": func() error {
			return e.store.InsertMessage(ctx, chat.Message{ID: id, ThreadID: id, ChannelID: id, Seq: 1})
		},
		"Message":  func() error { _, err := e.store.Message(ctx, id); return err },
		"Messages": func() error { _, err := e.store.Messages(ctx, id, 0, 10); return err },
		"UpdateMessage": func() error {
			_, err := e.store.UpdateMessage(ctx, id, func(*chat.Message) (bool, error) { return true, nil })
			return err
		},
		"CountUnreadMentions": func() error {
			_, err := e.store.CountUnreadMentions(ctx, alex, []uuid.UUID{id}, map[uuid.UUID]int64{id: 1})
			return err
		},
		"SpacesOfChannels": func() error { _, err := e.store.SpacesOfChannels(ctx, []uuid.UUID{id}); return err },
		"ChannelExists":    func() error { _, err := e.store.ChannelExists(ctx, id); return err },
		"SpaceExists":      func() error { _, err := e.store.SpaceExists(ctx, id); return err },
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, context.Canceled) || errors.Is(err, problem.ErrNotFound) {
			t.Errorf("%s = %v, want the context's error", name, err)
		}
	}
}
