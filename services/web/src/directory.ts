// The client's small directories, filled on demand and shared by every view of a session:
// principals (names, handles, kinds) from getPrincipal and listPrincipals, and threads (titles,
// first messages, activity) from getThread and listChannelThreads. Each asks the server once per
// id at a time and notifies its listener when an answer arrives, so a view can render at once
// with what it has and again when the names come in.
import { call, type RestClient, type Schemas } from "@bothy/client";

/** A principal as the client shows it. */
export interface Person {
  id: string;
  display_name: string;
  handle?: string;
  kind?: Schemas["PrincipalKind"];
  deactivated?: boolean;
}

/** How many suggestions the mention autocomplete asks for. */
export const SUGGESTIONS = 8;

/** Principals by id: persisted in localStorage (per signed-in principal), refreshed from the server. */
export class Principals {
  private readonly known = new Map<string, Person>();
  private readonly asked = new Set<string>();
  private readonly key: string;

  constructor(
    private readonly rest: RestClient,
    me: string,
    private readonly changed: () => void,
  ) {
    this.key = `bothy.names.${me}`;
    try {
      for (const p of Object.values(JSON.parse(localStorage.getItem(this.key) ?? "{}") as Record<string, Person>)) if (p.id) this.known.set(p.id, p);
    } catch {
      // a damaged cache: names are asked for again
    }
  }

  /** The principal, or undefined while it is being asked for (get starts the request). */
  get(id: string): Person | undefined {
    const p = this.known.get(id);
    if (!p) this.fetch(id);
    return p;
  }

  /** Remembers what the server (or an event's actor) said about a principal. */
  learn(p: Person): void {
    const old = this.known.get(p.id);
    if (old && old.display_name === p.display_name && old.handle === p.handle && old.kind === p.kind && old.deactivated === p.deactivated) return;
    this.known.set(p.id, { ...old, ...p });
    this.persist();
    this.changed();
  }

  /**
   * The principals whose handle or display name starts with prefix (listPrincipals), for a
   * mention; an empty prefix lists the first of the directory, in handle order.
   */
  async search(prefix: string, signal?: AbortSignal): Promise<Person[]> {
    const query = prefix ? { prefix, limit: SUGGESTIONS } : { limit: SUGGESTIONS };
    const page = await call(this.rest.GET("/api/v1/principals", { params: { query }, signal }));
    const out = page.items.filter((p) => !p.deactivated_at).map(fromDirectory);
    for (const p of out) this.learn(p);
    return out;
  }

  /** Forgets the cache (sign-out). */
  clear(): void {
    localStorage.removeItem(this.key);
  }

  private fetch(id: string): void {
    if (this.asked.has(id)) return;
    this.asked.add(id);
    call(this.rest.GET("/api/v1/principals/{principal_id}", { params: { path: { principal_id: id } } }))
      .then((p) => this.learn(fromDirectory(p)))
      .catch(() => this.asked.delete(id)); // asked again on the next render
  }

  private persist(): void {
    localStorage.setItem(this.key, JSON.stringify(Object.fromEntries(this.known)));
  }
}

function fromDirectory(p: Schemas["DirectoryPrincipal"]): Person {
  return { id: p.id, display_name: p.display_name, handle: p.handle, kind: p.kind, ...(p.deactivated_at ? { deactivated: true } : {}) };
}

/** What the thread directory knows of one thread (a summary of the list, or getThread). */
export interface ThreadInfo {
  id: string;
  channel_id: string;
  title: string;
  excerpt: string;
  created_by: string;
  last_message_at: string;
  reply_count: number;
  /** The counters of the list, used while the store does not know the thread. */
  unread_count: number;
  mention_count: number;
}

/** One channel's thread list as loaded so far (listChannelThreads), newest activity first. */
export interface ChannelThreads {
  ids: string[];
  next_cursor?: string;
  loading: boolean;
  error?: string;
}

/** Threads by id and channels' thread lists. */
export class Threads {
  private readonly info = new Map<string, ThreadInfo>();
  private readonly lists = new Map<string, ChannelThreads>();
  private readonly asked = new Set<string>();

  constructor(
    private readonly rest: RestClient,
    private readonly changed: () => void,
  ) {}

  /** What is known of a thread; undefined starts a getThread. */
  get(id: string): ThreadInfo | undefined {
    const t = this.info.get(id);
    if (!t) this.fetch(id);
    return t;
  }

  /** The channel's list as loaded so far; the first call loads its first page. */
  list(channelId: string): ChannelThreads {
    let l = this.lists.get(channelId);
    if (!l) {
      l = { ids: [], loading: false };
      this.lists.set(channelId, l);
      void this.more(channelId, true);
    }
    return l;
  }

  /** Loads the channel's next page (or its first again with fresh). */
  async more(channelId: string, fresh = false): Promise<void> {
    const l = this.lists.get(channelId) ?? { ids: [], loading: false };
    this.lists.set(channelId, l);
    if (l.loading || (!fresh && !l.next_cursor)) return;
    l.loading = true;
    this.changed();
    try {
      const cursor = fresh ? undefined : l.next_cursor;
      const page = await call(this.rest.GET("/api/v1/channels/{channel_id}/threads", { params: { path: { channel_id: channelId }, query: cursor ? { cursor } : {} } }));
      for (const s of page.items) {
        this.info.set(s.id, {
          id: s.id,
          channel_id: s.channel_id,
          title: s.title,
          excerpt: s.first_message_redacted ? "" : s.first_message_excerpt,
          created_by: s.created_by,
          last_message_at: s.last_message_at,
          reply_count: s.reply_count,
          unread_count: s.unread_count,
          mention_count: s.mention_count,
        });
      }
      const ids = page.items.map((s) => s.id);
      l.ids = fresh ? ids : [...l.ids, ...ids.filter((id) => !l.ids.includes(id))];
      l.next_cursor = page.next_cursor;
      l.error = undefined;
    } catch (err) {
      l.error = (err as Error).message;
    } finally {
      l.loading = false;
      this.changed();
    }
  }

  private fetch(id: string): void {
    if (this.asked.has(id)) return;
    this.asked.add(id);
    call(this.rest.GET("/api/v1/threads/{thread_id}", { params: { path: { thread_id: id } } }))
      .then((t) => {
        const first = t.first_message;
        this.info.set(id, {
          id,
          channel_id: t.channel_id,
          title: t.title ?? "",
          excerpt: first.redacted ? "" : first.content_md,
          created_by: t.created_by,
          last_message_at: t.last_message_at,
          reply_count: t.reply_count,
          unread_count: 0,
          mention_count: 0,
        });
        this.changed();
      })
      .catch(() => undefined); // a thread one may not read stays unnamed ("Thread not found")
  }
}
