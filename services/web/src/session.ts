// The signed-in session: the token (kept in localStorage so a reload stays signed in), the
// principal it names, the sync engine with its IndexedDB state, and the names of the people
// the client has seen.
import { SyncEngine, createRestClient, call, AuthError, type Schemas, type Message } from "@bothy/client";
import { IndexedDBStorage } from "@bothy/client/storage-indexeddb";

const TOKEN_KEY = "bothy.token";

/** A person, agent or app as the client names it. */
export interface Person {
  display_name: string;
  handle?: string;
}

/** One signed-in session. */
export class Session {
  readonly names = new Map<string, Person>();
  private readonly namesKey: string;

  constructor(
    readonly me: Schemas["PrincipalRef"],
    readonly engine: SyncEngine,
    private readonly storage: IndexedDBStorage,
  ) {
    this.namesKey = `bothy.names.${me.id}`;
    try {
      for (const [id, p] of Object.entries(JSON.parse(localStorage.getItem(this.namesKey) ?? "{}") as Record<string, Person>)) this.names.set(id, p);
    } catch {
      // a damaged cache: names are learnt again from events
    }
    this.learn(me.id, me);
    // Every event names its actor: the cheapest directory there is until listPrincipals lands.
    // TODO(reads2): fill names from listPrincipals/getPrincipal for authors no event named.
    engine.onEvent((e) => {
      const a = e.actor as { id?: string; display_name?: string; handle?: string };
      if (a.id && a.display_name) this.learn(a.id, { display_name: a.display_name, handle: a.handle });
    });
  }

  /**
   * The first message of threads the store knows only by id (a snapshot lists unread threads
   * without their title or text), to name them in the channel's list.
   * TODO(reads1): getThread (and listChannelThreads) give the title; use them once they land.
   */
  readonly firstMessages = new Map<string, Message | null>();
  private asked = new Set<string>();

  /** Loads the first message of each thread in ids not asked for yet; then calls done. */
  nameThreads(ids: string[], done: () => void): void {
    const todo = ids.filter((id) => !this.asked.has(id));
    for (const id of todo) {
      this.asked.add(id);
      call(this.engine.rest.GET("/api/v1/threads/{thread_id}/messages", { params: { path: { thread_id: id }, query: { after: 0, limit: 1 } } }))
        .then((page) => {
          this.firstMessages.set(id, page.items[0] ?? null);
          done();
        })
        .catch(() => this.asked.delete(id));
    }
  }

  private marks = new Map<string, { wanted: number; sent: number; busy: boolean }>();

  /**
   * Moves the reader's position in a thread to seq: one request at a time per thread, always
   * for the newest seq asked for, so an older mark never lands after a newer one.
   */
  markRead(threadId: string, seq: number): void {
    const m = this.marks.get(threadId) ?? { wanted: 0, sent: 0, busy: false };
    this.marks.set(threadId, m);
    m.wanted = Math.max(m.wanted, seq);
    if (m.busy || m.wanted <= m.sent) return;
    m.busy = true;
    const target = m.wanted;
    this.engine
      .markRead(threadId, target)
      .then(() => (m.sent = Math.max(m.sent, target)))
      .catch(() => (m.wanted = m.sent)) // offline: the thread view asks again when the engine is live
      .finally(() => {
        m.busy = false;
        if (m.wanted > m.sent) this.markRead(threadId, m.wanted);
      });
  }

  /** Remembers a principal's name. */
  learn(id: string, p: Person): void {
    const old = this.names.get(id);
    if (old && old.display_name === p.display_name && old.handle === p.handle) return;
    this.names.set(id, { display_name: p.display_name, ...(p.handle ? { handle: p.handle } : {}) });
    localStorage.setItem(this.namesKey, JSON.stringify(Object.fromEntries(this.names)));
  }

  /** A principal's display name, or "someone" with the end of the id. */
  name(id: string): string {
    const agent = this.engine.state?.agents[id];
    if (agent) return agent.agent.display_name;
    // UUIDv7 ids share their leading (time) digits; the last ones tell people apart.
    return this.names.get(id)?.display_name ?? `someone (${id.slice(-6)})`;
  }

  /** Stops syncing, forgets the token and deletes the stored state. */
  async signOut(): Promise<void> {
    await this.engine.stop();
    await this.storage.clear();
    localStorage.removeItem(TOKEN_KEY);
    localStorage.removeItem(this.namesKey);
  }
}

/** The token a reload finds, if any. */
export function storedToken(): string | null {
  return localStorage.getItem(TOKEN_KEY);
}

/** Signs in with a token: checks it (getMe), starts the engine from the stored state or a snapshot. */
export async function signIn(token: string): Promise<Session> {
  const baseUrl = location.origin;
  const rest = createRestClient({ baseUrl, token });
  let me: Schemas["PrincipalRef"];
  try {
    const p = await call(rest.GET("/api/v1/me"));
    me = { id: p.id, kind: p.kind, display_name: p.display_name, handle: p.handle };
  } catch (err) {
    if (err instanceof AuthError) throw new Error("This token was not accepted: it may be mistyped, revoked or expired.");
    throw err;
  }
  localStorage.setItem(TOKEN_KEY, token);
  // One database per server and principal, so two people on one browser never share a state.
  const storage = new IndexedDBStorage(`bothy:${baseUrl}:${me.id}`);
  const engine = new SyncEngine({ baseUrl, token, storage });
  const s = new Session(me, engine, storage);
  await engine.start();
  return s;
}

/** Forgets a token that no longer works. */
export function forgetToken(): void {
  localStorage.removeItem(TOKEN_KEY);
}
