// The signed-in session: the token (kept in localStorage so a reload stays signed in), the
// principal it names, the sync engine with its IndexedDB state, and the directories of
// principals and threads (directory.ts) the views name things from.
import { SyncEngine, createRestClient, call, AuthError, type Schemas } from "@bothy/client";
import { IndexedDBStorage } from "@bothy/client/storage-indexeddb";
import { Principals, Threads, type Person } from "./directory.js";

const TOKEN_KEY = "bothy.token";

/** One signed-in session. */
export class Session {
  /** Who is who: names, handles and kinds of principals (getPrincipal, listPrincipals). */
  readonly people: Principals;
  /** Threads' titles and channels' thread lists (getThread, listChannelThreads). */
  readonly threads: Threads;
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly me: Schemas["PrincipalRef"],
    readonly engine: SyncEngine,
    private readonly storage: IndexedDBStorage,
  ) {
    const changed = () => {
      for (const f of this.listeners) f();
    };
    this.people = new Principals(engine.rest, me.id, changed);
    this.threads = new Threads(engine.rest, changed);
    this.people.learn({ id: me.id, display_name: me.display_name, handle: me.handle, kind: me.kind });
    // Every event names its actor: a name learnt for free (a rename shows at once).
    engine.onEvent((e) => {
      const a = e.actor as { id?: string; display_name?: string; handle?: string; kind?: Person["kind"] };
      if (a.id && a.display_name) this.people.learn({ id: a.id, display_name: a.display_name, ...(a.handle ? { handle: a.handle } : {}), ...(a.kind ? { kind: a.kind } : {}) });
    });
  }

  /** Calls f whenever a directory learnt something (a name, a thread list page). */
  onChange(f: () => void): () => void {
    this.listeners.add(f);
    return () => this.listeners.delete(f);
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

  /** A principal's display name; "someone" while the directory is asked (or for one it does not list). */
  name(id: string): string {
    const agent = this.engine.state?.agents[id];
    if (agent) return agent.agent.display_name;
    return this.people.get(id)?.display_name ?? "someone";
  }

  /** Stops syncing, forgets the token and deletes the stored state. */
  async signOut(): Promise<void> {
    await this.engine.stop();
    await this.storage.clear();
    localStorage.removeItem(TOKEN_KEY);
    this.people.clear();
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
