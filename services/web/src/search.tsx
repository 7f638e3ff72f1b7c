// Search: the header's search box (a form with role search) opens #/search?q=..., whose pane
// lists the hits of searchMessages, best first, each with its author, where it was posted and
// its excerpt, the matched words marked. A hit links to its thread, scrolled to the message.
import { useEffect, useRef, useState } from "preact/hooks";
import { call, type Schemas, type StoreState } from "@bothy/client";
import type { Session } from "./session.js";
import { href } from "./route.js";
import { Avatar } from "./people.js";

/** The header's search box; q is the query of the search route shown, if any. */
export function SearchBox({ q }: { q: string }) {
  const [text, setText] = useState(q);
  useEffect(() => setText(q), [q]);
  return (
    <form
      class="search-box"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        if (text.trim()) location.hash = href({ view: "search", q: text.trim() });
      }}
    >
      <label for="search" class="sr-only">
        Search messages
      </label>
      <input id="search" type="search" placeholder="Search messages" value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <button type="submit" class="secondary">
        Search
      </button>
    </form>
  );
}

type Hit = Schemas["SearchHit"];

/** The search pane (route #/search?q=...): searchMessages' hits for q, page by page. */
export function SearchPane({ st, session, q }: { st: StoreState; session: Session; q: string }) {
  const [hits, setHits] = useState<Hit[]>([]);
  const [next, setNext] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [searched, setSearched] = useState(false);
  const [error, setError] = useState("");
  const heading = useRef<HTMLHeadingElement>(null);

  const load = async (cursor?: string) => {
    setBusy(true);
    setError("");
    try {
      const page = await call(session.engine.rest.GET("/api/v1/search/messages", { params: { query: { q, ...(cursor ? { cursor } : {}) } } }));
      setHits((old) => (cursor ? [...old, ...page.items] : page.items));
      setNext(page.next_cursor);
      setSearched(true);
    } catch (err) {
      setError(`Could not search: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    setHits([]);
    setNext(undefined);
    setSearched(false);
    heading.current?.focus();
    if (q.trim()) void load();
  }, [q]);

  const where = (m: Schemas["Message"]) => {
    const ch = st.channels[m.channel_id];
    const channel = ch ? (ch.kind === "dm" ? "a direct message" : `# ${ch.name ?? "unnamed"}`) : "a channel";
    const th = session.threads.get(m.thread_id);
    return th?.title ? `${channel}, ${th.title}` : channel;
  };

  return (
    <section class="pane search" aria-labelledby="search-title">
      <div class="pane-head">
        <a class="back" href="#/" aria-label="Back to the channels">
          ‹ Channels
        </a>
        <h1 id="search-title" ref={heading} tabIndex={-1}>
          Search: {q}
        </h1>
      </div>
      <p role="status" class="muted">
        {busy ? "Searching" : error || !searched ? "" : hits.length === 0 ? "No messages match." : `${hits.length}${next ? " or more" : ""} ${hits.length === 1 ? "message matches" : "messages match"}.`}
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <ol class="hits" aria-label="Search results">
        {hits.map((h) => (
          <li key={h.message.id}>
            <a href={href({ view: "thread", id: h.message.thread_id, message: h.message.id })} data-message={h.message.id}>
              <span class="meta">
                <Avatar session={session} id={h.message.author_id} small />
                <strong class="author">{session.name(h.message.author_id)}</strong>
                <span class="muted where">{where(h.message)}</span>
              </span>
              <span class="excerpt">
                {h.excerpt.map((seg, i) => (seg.match ? <mark key={i}>{seg.text}</mark> : <span key={i}>{seg.text}</span>))}
              </span>
            </a>
          </li>
        ))}
      </ol>
      {next && (
        <button type="button" class="secondary" disabled={busy} onClick={() => void load(next)}>
          More results
        </button>
      )}
    </section>
  );
}
