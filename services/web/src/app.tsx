// The app: sign-in, then a shell of three panes (spaces and channels, a channel's threads, a
// thread's messages). On a phone-sized screen one pane shows at a time, chosen by the route.
// Everything shown is read from the sync engine's store (engine.state), which the engine keeps
// current (snapshot, catch-up, live events, catch-up again after going offline); the app
// re-renders on engine.onChange, and when the session's directories (names, thread lists) learn
// something.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { call, threadMessages, unreadOf, draftKey, ApiError, type StoreState, type ThreadEntry, type Message, type PendingMessage } from "@bothy/client";
import { Session, signIn, storedToken, forgetToken } from "./session.js";
import { href, useRoute, type Route } from "./route.js";
import { Composer } from "./composer.js";
import { Avatar } from "./people.js";
import { Reactions } from "./reactions.js";
import { SearchBox, SearchPane } from "./search.js";
import { channelCounts } from "./counts.js";

/** Re-renders on every change of the engine (at most once a frame). */
function useEngine(s: Session): StoreState | undefined {
  const [, setTick] = useState(0);
  useEffect(() => {
    let frame = 0;
    const render = () => {
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        setTick((t) => t + 1);
      });
    };
    const off = s.engine.onChange(render);
    const offDirectory = s.onChange(render);
    return () => {
      off();
      offDirectory();
      cancelAnimationFrame(frame);
    };
  }, [s]);
  return s.engine.state;
}

/** Whether the browser believes it is online (online and offline events). */
function useOnline(): boolean {
  const [on, setOn] = useState(navigator.onLine);
  useEffect(() => {
    const up = () => setOn(true);
    const down = () => setOn(false);
    addEventListener("online", up);
    addEventListener("offline", down);
    return () => {
      removeEventListener("online", up);
      removeEventListener("offline", down);
    };
  }, []);
  return on;
}

export function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [restoring, setRestoring] = useState(() => storedToken() !== null);
  const [error, setError] = useState("");

  const start = useCallback(async (token: string) => {
    setError("");
    try {
      setSession(await signIn(token));
    } catch (err) {
      setError((err as Error).message);
      if (/not accepted/.test((err as Error).message)) forgetToken();
    } finally {
      setRestoring(false);
    }
  }, []);

  useEffect(() => {
    const t = storedToken();
    if (t) void start(t);
  }, [start]);

  if (restoring) return <p class="loading" role="status">Loading bothy</p>;
  if (!session) return <SignIn onToken={start} error={error} />;
  return (
    <Shell
      session={session}
      onSignOut={async (why) => {
        await session.signOut();
        setSession(null);
        setError(why ?? "");
      }}
    />
  );
}

function SignIn({ onToken, error }: { onToken: (t: string) => Promise<void>; error: string }) {
  const [token, setToken] = useState("");
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  return (
    <main class="signin" id="main">
      <h1>Sign in to bothy</h1>
      <form
        onSubmit={async (ev) => {
          ev.preventDefault();
          if (!token.trim()) return;
          setBusy(true);
          await onToken(token.trim());
          setBusy(false);
        }}
      >
        <label for="token">Access token</label>
        <input
          id="token"
          ref={input}
          type="password"
          autocomplete="off"
          spellcheck={false}
          placeholder="bothy_..."
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
          aria-describedby="token-help"
          aria-invalid={error ? true : undefined}
        />
        <button type="submit" disabled={busy}>
          {busy ? "Signing in" : "Sign in"}
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </form>
      <section id="token-help" class="help" aria-label="Where tokens come from">
        <p>A token stands for one person, agent or app. To get one:</p>
        <ul>
          <li>
            <code>make run</code> prints the owner's token (Alex) on the first start.
          </li>
          <li>
            <code>make demo</code> creates Sam, Robin and an agent, and prints a fresh token for each.
          </li>
          <li>
            <code>bothy admin token</code> issues a token for anyone, and the owner can issue tokens through the API.
          </li>
        </ul>
        <p>The token stays in this browser until you sign out.</p>
      </section>
    </main>
  );
}

const STATUS: Record<string, string> = {
  idle: "Starting",
  snapshot: "Loading",
  catching_up: "Catching up",
  live: "Live",
  offline: "Offline, reconnecting",
  stopped: "Stopped",
  failed: "Disconnected",
};

function Shell({ session, onSignOut }: { session: Session; onSignOut: (why?: string) => Promise<void> }) {
  const st = useEngine(session);
  const route = useRoute();
  const online = useOnline();
  const status = session.engine.status;

  useEffect(() => {
    if (status === "failed" && session.engine.lastError?.name === "AuthError") {
      void onSignOut("The server no longer accepts this token; sign in again.");
    }
  }, [status]);

  if (!st) return <p class="loading">Loading</p>;
  const thread = route.view === "thread" ? st.threads[route.id] : undefined;
  const channelId = route.view === "channel" ? route.id : route.view === "thread" ? (thread?.channel_id ?? session.threads.get(route.id)?.channel_id) : undefined;
  const shown = online ? status : "offline";
  return (
    <div class="shell" data-view={route.view}>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById("main")?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="#/">
          bothy
        </a>
        <span class={`status status-${shown}`} role="status" aria-live="polite" data-status={shown}>
          {STATUS[shown] ?? shown}
        </span>
        <SearchBox q={route.view === "search" ? route.q : ""} />
        <span class="me">
          <Avatar session={session} id={st.principal.id} small />
          {st.principal.display_name}
        </span>
        <button type="button" class="link" onClick={() => onSignOut()}>
          Sign out
        </button>
      </header>
      <Sidebar st={st} session={session} current={channelId} />
      <main id="main" tabIndex={-1} class="content">
        {route.view === "home" && <Welcome st={st} />}
        {channelId && <ChannelPane st={st} session={session} channelId={channelId} route={route} />}
        {route.view === "channel" && (
          <p class="pane pick muted" aria-hidden="true">
            Pick a thread to read it, or start a new one.
          </p>
        )}
        {route.view === "thread" && <ThreadPane st={st} session={session} threadId={route.id} target={route.message} online={online && status === "live"} />}
        {route.view === "search" && <SearchPane st={st} session={session} q={route.q} />}
      </main>
    </div>
  );
}

function Welcome({ st }: { st: StoreState }) {
  const none = Object.keys(st.channels).length === 0;
  return (
    <section class="pane welcome">
      <h1>Welcome, {st.principal.display_name}</h1>
      <p>{none ? "You are in no channel yet: ask an owner or admin for a grant." : "Pick a channel on the left to see its threads."}</p>
    </section>
  );
}

function Badges({ unread, mentions }: { unread: number; mentions: number }) {
  return (
    <>
      {mentions > 0 && (
        <span class="badge mention" data-testid="mentions" aria-label={`${mentions} ${mentions === 1 ? "mention" : "mentions"}`}>
          @{mentions}
        </span>
      )}
      {unread > 0 && (
        <span class="badge" data-testid="unread" aria-label={`${unread} unread`}>
          {unread}
        </span>
      )}
    </>
  );
}

function channelName(st: StoreState, session: Session, channelId: string): string {
  const ch = st.channels[channelId];
  if (!ch) return "unknown channel";
  if (ch.kind === "dm") {
    const others = ch.participant_ids.filter((p) => p !== st.principal.id).map((p) => session.name(p));
    return others.length ? others.join(", ") : "Just you";
  }
  return ch.name ?? "unnamed";
}

function Sidebar({ st, session, current }: { st: StoreState; session: Session; current?: string }) {
  const spaces = Object.values(st.spaces).sort((a, b) => a.name.localeCompare(b.name));
  const channels = Object.values(st.channels);
  const dms = channels.filter((c) => c.kind === "dm");
  const counts = channelCounts(st);
  const link = (id: string, label: string) => {
    const c = counts.get(id) ?? { unread: 0, mentions: 0 };
    return (
      <li key={id}>
        <a href={href({ view: "channel", id })} aria-current={id === current ? "page" : undefined} class={c.unread ? "unread" : undefined}>
          <span class="name">{label}</span>
          <Badges {...c} />
        </a>
      </li>
    );
  };
  return (
    <nav class="sidebar pane" aria-label="Spaces and channels">
      {spaces.map((sp) => {
        const list = channels.filter((c) => c.space_id === sp.id && c.kind !== "dm").sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""));
        return (
          <section key={sp.id} aria-labelledby={`space-${sp.id}`}>
            <h2 id={`space-${sp.id}`}>{sp.name}</h2>
            {list.length ? <ul>{list.map((c) => link(c.id, `# ${c.name ?? "unnamed"}`))}</ul> : <p class="muted">No channels you can see.</p>}
          </section>
        );
      })}
      {dms.length > 0 && (
        <section aria-labelledby="space-dms">
          <h2 id="space-dms">Direct messages</h2>
          <ul>{dms.map((c) => link(c.id, channelName(st, session, c.id)))}</ul>
        </section>
      )}
    </nav>
  );
}

/** A thread of a channel's list: what the store knows (live counters) and what the server listed. */
interface ThreadRow {
  id: string;
  entry?: ThreadEntry;
  activity: string;
}

/** The time of a UUIDv7 (its first 48 bits are milliseconds since 1970), as an ISO string. */
function uuidTime(id: string): string {
  const ms = parseInt(id.replace(/-/g, "").slice(0, 12), 16);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : "";
}

/**
 * The threads of a channel, most recent activity first: those listChannelThreads listed so far
 * and those the store knows (created or posted in since the list was loaded), once each.
 */
function channelThreads(st: StoreState, session: Session, channelId: string): ThreadRow[] {
  const rows = new Map<string, ThreadRow>();
  const list = session.threads.list(channelId);
  for (const id of list.ids) rows.set(id, { id, activity: session.threads.get(id)?.last_message_at ?? uuidTime(id) });
  for (const th of Object.values(st.threads)) {
    if (th.channel_id !== channelId) continue;
    const newest = threadMessages(st, th.id).pop();
    const listed = rows.get(th.id)?.activity ?? uuidTime(th.id);
    const activity = newest && newest.created_at > listed ? newest.created_at : listed;
    rows.set(th.id, { id: th.id, entry: th, activity });
  }
  return [...rows.values()].sort((a, b) => (a.activity === b.activity ? (a.id < b.id ? 1 : -1) : a.activity < b.activity ? 1 : -1));
}

/** A thread's title: its own, else the start of its first message. */
function threadTitle(st: StoreState, session: Session, th: ThreadEntry | undefined, id: string): string {
  if (th?.title) return th.title;
  const info = session.threads.get(id);
  if (info?.title) return info.title;
  const first = threadMessages(st, id).find((m) => m.seq === 1);
  const text = first ? (first.redacted ? "" : first.content_md) : (info?.excerpt ?? "");
  if (text) {
    const line = text.split("\n")[0]!;
    return line.length > 80 ? `${line.slice(0, 79)}…` : line;
  }
  return first || info ? "Untitled thread" : "Loading thread";
}

function ChannelPane({ st, session, channelId, route }: { st: StoreState; session: Session; channelId: string; route: Route }) {
  const ch = st.channels[channelId];
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (route.view === "channel") heading.current?.focus();
  }, [channelId, route.view]);
  const threads = channelThreads(st, session, channelId);
  const list = session.threads.list(channelId);
  if (!ch) {
    return (
      <section class="pane channel">
        <h1 ref={heading} tabIndex={-1}>Channel not found</h1>
        <p>You may have lost access to it. <a href="#/">Back to the channels</a></p>
      </section>
    );
  }
  const label = ch.kind === "dm" ? channelName(st, session, channelId) : `# ${ch.name ?? "unnamed"}`;
  return (
    <section class="pane channel" aria-labelledby="channel-title">
      <div class="pane-head">
        <a class="back" href="#/" aria-label="Back to the channels">
          ‹ Channels
        </a>
        <h1 id="channel-title" ref={heading} tabIndex={-1}>
          {label}
        </h1>
        {ch.topic && <p class="topic">{ch.topic}</p>}
      </div>
      <NewThread session={session} channelId={channelId} />
      {threads.length ? (
        <ul class="threads" aria-label="Threads">
          {threads.map(({ id, entry }) => {
            const info = session.threads.get(id);
            const u = entry ? unreadOf(entry) : { unread_count: info?.unread_count ?? 0, mention_count: info?.mention_count ?? 0 };
            const last = threadMessages(st, id).filter((m) => !m.redacted).pop();
            const replies = info ? Math.max(info.reply_count, (entry?.last_message_seq ?? 1) - 1) : entry ? entry.last_message_seq - 1 : 0;
            const starter = entry?.created_by ?? info?.created_by;
            return (
              <li key={id}>
                <a href={href({ view: "thread", id })} aria-current={route.view === "thread" && route.id === id ? "page" : undefined} class={u.unread_count ? "unread" : undefined} data-thread={id}>
                  <span class="title">{threadTitle(st, session, entry, id)}</span>
                  <Badges unread={u.unread_count} mentions={u.mention_count} />
                  <span class="preview">
                    {last ? (
                      <>
                        {session.name(last.author_id)}: {last.content_md.slice(0, 120)}
                      </>
                    ) : (
                      <>
                        {starter ? `Started by ${session.name(starter)}, ` : ""}
                        {replies === 0 ? "no replies" : replies === 1 ? "1 reply" : `${replies} replies`}
                      </>
                    )}
                  </span>
                </a>
              </li>
            );
          })}
        </ul>
      ) : list.loading ? (
        <p class="muted" role="status">Loading threads</p>
      ) : (
        <p class="muted">No threads yet. Start one above.</p>
      )}
      {list.error && (
        <p class="error" role="alert">
          Could not list the threads: {list.error}
        </p>
      )}
      {list.next_cursor && (
        <button type="button" class="secondary more" disabled={list.loading} onClick={() => void session.threads.more(channelId)}>
          Older threads
        </button>
      )}
    </section>
  );
}

function NewThread({ session, channelId }: { session: Session; channelId: string }) {
  const [open, setOpen] = useState(false);
  const [title, setTitle] = useState("");
  const [text, setText] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const titleInput = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (open) titleInput.current?.focus();
  }, [open]);
  if (!open) {
    return (
      <button type="button" class="new-thread" onClick={() => setOpen(true)}>
        New thread
      </button>
    );
  }
  return (
    <form
      class="new-thread-form"
      aria-label="New thread"
      onKeyDown={(e) => e.key === "Escape" && setOpen(false)}
      onSubmit={async (e) => {
        e.preventDefault();
        if (!text.trim()) return setError("Write the first message.");
        setBusy(true);
        setError("");
        try {
          const th = await session.engine.write((key) =>
            session.engine.rest.POST("/api/v1/channels/{channel_id}/threads", {
              params: { path: { channel_id: channelId }, header: { "Idempotency-Key": key } },
              body: { content_md: text, ...(title.trim() ? { title: title.trim() } : {}) },
            }),
          );
          setTitle("");
          setText("");
          setOpen(false);
          location.hash = href({ view: "thread", id: th.id });
        } catch (err) {
          setError(`Could not start the thread: ${(err as Error).message}`);
        } finally {
          setBusy(false);
        }
      }}
    >
      <label for="new-thread-title">Title (optional)</label>
      <input id="new-thread-title" ref={titleInput} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
      <label for="new-thread-text">First message</label>
      <textarea id="new-thread-text" rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <div class="row">
        <button type="submit" disabled={busy}>
          Start thread
        </button>
        <button type="button" class="secondary" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

/** Loads a thread's messages page by page into the store (history the events did not bring). */
async function loadThread(session: Session, threadId: string): Promise<void> {
  let after = 0;
  for (let page = 0; page < 100; page++) {
    const items = await session.engine.loadMessages(threadId, after);
    if (items.length === 0) return;
    after = Math.max(...items.map((m) => m.seq));
  }
}

function ThreadPane({ st, session, threadId, target, online }: { st: StoreState; session: Session; threadId: string; target?: string; online: boolean }) {
  const th = st.threads[threadId];
  const [loading, setLoading] = useState(true);
  const [loadError, setLoadError] = useState("");
  const heading = useRef<HTMLHeadingElement>(null);
  const list = useRef<HTMLOListElement>(null);

  useEffect(() => {
    setLoading(true);
    setLoadError("");
    loadThread(session, threadId)
      .catch((err) => setLoadError(`Could not load the messages: ${(err as Error).message}`))
      .finally(() => setLoading(false));
    heading.current?.focus();
  }, [threadId]);

  const messages = threadMessages(st, threadId);
  const pending = Object.values(st.pending).filter((p) => p.thread_id === threadId && !(p.id && st.messages[threadId]?.[p.id]));
  const lastSeq = th?.last_message_seq ?? 0;

  // Reading: what the open thread shows counts as read while the page is visible and the
  // engine is live. One mark at a time per thread, always the newest seq, so two marks never
  // race and leave the older one last (a read position may move back on the server).
  useEffect(() => {
    const mark = () => {
      if (!th || !online || document.visibilityState !== "visible") return;
      if (lastSeq === 0 || th.last_read_seq >= lastSeq) return;
      session.markRead(threadId, lastSeq);
    };
    mark();
    document.addEventListener("visibilitychange", mark);
    return () => document.removeEventListener("visibilitychange", mark);
  }, [threadId, lastSeq, th?.last_read_seq, online]);

  // Keep the newest message in view as messages arrive, unless the route names a message (a
  // search hit): that one is scrolled to, marked and focused once it is loaded.
  const targetShown = useRef("");
  useEffect(() => {
    if (target) {
      const el = list.current?.querySelector<HTMLElement>(`li[data-id="${target}"]`);
      if (el && targetShown.current !== target) {
        targetShown.current = target;
        el.scrollIntoView?.({ block: "center" });
        el.focus();
      }
      return;
    }
    const el = list.current?.lastElementChild;
    el?.scrollIntoView?.({ block: "nearest" });
  }, [messages.length, pending.length, target]);

  // A draft the snapshot only names (saved on another device, or before this client's
  // snapshot) is read with getDraft, so reopening the thread restores its text.
  const channelOf = th?.channel_id ?? messages[0]?.channel_id ?? session.threads.get(threadId)?.channel_id;
  const stored = channelOf ? st.drafts[draftKey(channelOf, threadId)] : undefined;
  const [fetchedDraft, setFetchedDraft] = useState<{ key: string; text: string } | null>(null);
  useEffect(() => {
    if (!channelOf || !stored || stored.content_md !== undefined) return;
    const key = draftKey(channelOf, threadId);
    call(session.engine.rest.GET("/api/v1/channels/{channel_id}/draft", { params: { path: { channel_id: channelOf }, query: { thread_id: threadId } } }))
      .then((d) => setFetchedDraft({ key, text: d.content_md }))
      .catch((err) => {
        if (!(err instanceof ApiError && err.status === 404)) setLoadError(`Could not load the draft: ${(err as Error).message}`);
      });
  }, [channelOf, threadId, stored?.version]);

  if (!th && !loading && messages.length === 0) {
    return (
      <section class="pane thread">
        <h1 ref={heading} tabIndex={-1}>Thread not found</h1>
        <p>{loadError || "You may have lost access to it."} <a href="#/">Back to the channels</a></p>
      </section>
    );
  }
  const channelId = channelOf;
  const canWrite = !!channelId;
  const draftText = channelId ? (st.drafts[draftKey(channelId, threadId)]?.content_md ?? (fetchedDraft?.key === draftKey(channelId, threadId) ? fetchedDraft.text : "")) : "";
  return (
    <section class="pane thread" aria-labelledby="thread-title">
      <div class="pane-head">
        {channelId && (
          <a class="back" href={href({ view: "channel", id: channelId })} aria-label="Back to the threads">
            ‹ Threads
          </a>
        )}
        <h1 id="thread-title" ref={heading} tabIndex={-1}>
          {threadTitle(st, session, th, threadId)}
        </h1>
      </div>
      {loading && messages.length === 0 && <p role="status">Loading messages</p>}
      {loadError && (
        <p class="error" role="alert">
          {loadError}
        </p>
      )}
      <ol class="messages" ref={list} role="log" aria-label="Messages" aria-live="polite">
        {messages.map((m) => (
          <MessageItem key={m.id} m={m} session={session} mine={m.author_id === st.principal.id} target={m.id === target} />
        ))}
        {pending.map((p) => (
          <PendingItem key={p.local_id} p={p} session={session} />
        ))}
      </ol>
      {canWrite && <Composer key={threadId} session={session} channelId={channelId} threadId={threadId} initial={draftText} />}
    </section>
  );
}

function time(iso: string): string {
  const d = new Date(iso);
  return d.toLocaleString(undefined, { hour: "2-digit", minute: "2-digit", month: "short", day: "numeric" });
}

function MessageItem({ m, session, mine, target }: { m: Message; session: Session; mine: boolean; target: boolean }) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(m.content_md);
  const [confirm, setConfirm] = useState(false);
  const [error, setError] = useState("");
  const editBox = useRef<HTMLTextAreaElement>(null);
  const editButton = useRef<HTMLButtonElement>(null);
  const wasEditing = useRef(false);
  useEffect(() => {
    // Into the edit box on Edit; back to the Edit button on Save or Cancel.
    if (editing) editBox.current?.focus();
    else if (wasEditing.current) editButton.current?.focus();
    wasEditing.current = editing;
  }, [editing]);

  if (m.redacted) {
    return (
      <li class="message redacted" data-seq={m.seq} data-id={m.id}>
        <span class="muted">Message deleted</span>
      </li>
    );
  }
  const save = async () => {
    setError("");
    try {
      await session.engine.write(() =>
        session.engine.rest.PATCH("/api/v1/messages/{message_id}", { params: { path: { message_id: m.id } }, body: { content_md: draft } }),
      );
      setEditing(false);
    } catch (err) {
      setError(`Could not save: ${(err as Error).message}`);
    }
  };
  const remove = async () => {
    setError("");
    try {
      await session.engine.write(() => session.engine.rest.DELETE("/api/v1/messages/{message_id}", { params: { path: { message_id: m.id } } }));
    } catch (err) {
      setError(`Could not delete: ${(err as Error).message}`);
      setConfirm(false);
    }
  };
  return (
    <li class={`message${mine ? " mine" : ""}${target ? " target" : ""}`} data-seq={m.seq} data-id={m.id} tabIndex={target ? -1 : undefined}>
      <div class="meta">
        <Avatar session={session} id={m.author_id} />
        <strong class="author">{session.name(m.author_id)}</strong>
        <time dateTime={m.created_at}>{time(m.created_at)}</time>
        {m.edited_at && <span class="muted">(edited)</span>}
      </div>
      {editing ? (
        <form
          class="edit"
          onSubmit={(e) => (e.preventDefault(), void save())}
          onKeyDown={(e) => {
            if (e.key === "Escape") {
              setEditing(false);
              setDraft(m.content_md);
            } else if (e.key === "Enter" && !e.shiftKey) {
              e.preventDefault();
              void save();
            }
          }}
        >
          <label class="sr-only" for={`edit-${m.id}`}>
            Edit message
          </label>
          <textarea id={`edit-${m.id}`} ref={editBox} rows={2} value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
          <div class="row">
            <button type="submit">Save</button>
            <button type="button" class="secondary" onClick={() => (setEditing(false), setDraft(m.content_md))}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <p class="text">{m.content_md}</p>
      )}
      {!editing && <Reactions m={m} session={session} />}
      {mine && !editing && (
        <div class="actions">
          <button type="button" class="link" ref={editButton} onClick={() => (setDraft(m.content_md), setEditing(true))} aria-label="Edit this message">
            Edit
          </button>
          {confirm ? (
            <>
              <button type="button" class="link danger" onClick={() => void remove()} aria-label="Really delete this message">
                Delete for everyone
              </button>
              <button type="button" class="link" onClick={() => setConfirm(false)}>
                Keep
              </button>
            </>
          ) : (
            <button type="button" class="link" onClick={() => setConfirm(true)} aria-label="Delete this message">
              Delete
            </button>
          )}
        </div>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </li>
  );
}

function PendingItem({ p, session }: { p: PendingMessage; session: Session }) {
  return (
    <li class="message mine pending" data-state={p.state}>
      <div class="meta">
        <Avatar session={session} id={session.me.id} />
        <strong class="author">{session.me.display_name}</strong>
        <span class="muted">{p.state === "failed" ? "not sent" : "sending"}</span>
      </div>
      <p class="text">{p.content_md}</p>
      {p.state === "failed" && (
        <div class="actions">
          <button type="button" class="link" onClick={() => session.engine.resend(p.local_id).catch(() => undefined)}>
            Try again
          </button>
        </div>
      )}
    </li>
  );
}
