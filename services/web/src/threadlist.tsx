// The thread list pane (route #/c/<channel>): the channel's threads, most recent activity first,
// from listChannelThreads (directory.ts) merged with those the store learns live, each with its
// badges and the newest message; "New thread" starts one (engine.createThread).
import { useEffect, useRef, useState } from "preact/hooks";
import { threadMessages, unreadOf, type StoreState, type ThreadEntry } from "@bothy/client";
import type { Session } from "./session.js";
import { href, type Route } from "./route.js";
import { Badges } from "./badges.js";
import { channelName } from "./sidebar.js";

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
export function threadTitle(st: StoreState, session: Session, th: ThreadEntry | undefined, id: string): string {
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

/** The thread list pane of a channel; route says which thread is open, if any (aria-current). */
export function ChannelPane({ st, session, channelId, route }: { st: StoreState; session: Session; channelId: string; route: Route }) {
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

/** The "New thread" button, which opens a form for a title and the first message. */
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
          const th = await session.engine.createThread(channelId, text, title.trim() || undefined);
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
