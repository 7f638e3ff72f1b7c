// The sync engine (spec 03 from the client's side): start from the stored cursor or from a
// snapshot; catch up page by page to the head over REST; switch to the gateway with `resume`
// from the cursor; apply every event once, in seq order, to the local store; recover from every
// resync_required as its `recovery` says; fall back to REST catch-up while the socket is down;
// reconnect with jittered backoff; save the state (cursor and store together) as it goes.
// What it does next is decided by the pure state machine of machine.ts (ADR 0037); this file is
// its driver: it performs the machine's effects (fetches, the socket, timers, storage) and
// feeds their outcomes back as inputs.
import type { Envelope, Schemas, Snapshot } from "./events.js";
import type { ClientFrame, ErrorFrame, ServerFrame } from "./gen/frames.js";
import { ApiError, ResyncRequired, call, createRestClient, type RestClient } from "./rest.js";
import { backoffDelay, sleep, type BackoffOptions } from "./backoff.js";
import {
  SILENCE_CLOSE,
  closeOutcome,
  failureInput,
  initialState,
  next,
  statusOf,
  type Effect,
  type Input,
  type MachineState,
  type SyncStatus,
} from "./machine.js";
import { MemoryStorage, type SyncStorage } from "./storage.js";
import {
  applyEvent,
  fromSnapshot,
  hydrateMentions,
  mergeStructure,
  newEffects,
  type Message,
  type StoreState,
} from "./store.js";
import { newIdempotencyKey, withRetries, type RetryOptions } from "./writes.js";

/** The browser WebSocket API, as much of it as the engine uses (ws's WebSocket has it too). */
export interface WebSocketLike {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

/** A WebSocket constructor: the global one of browsers, or ws's in Node 20. */
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/** Options of SyncEngine. Every delay is in milliseconds. */
export interface EngineOptions {
  /** The server's origin, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  /** A bearer token. */
  token: string;
  /** Where the state is kept; in memory by default. */
  storage?: SyncStorage;
  /** fetch; the global one by default. */
  fetch?: typeof fetch;
  /** The WebSocket constructor; the global one by default; null for REST polling only. */
  WebSocket?: WebSocketConstructor | null;
  /** Reconnect backoff (default 250 to 30000). */
  reconnect?: BackoffOptions;
  /** Write retries (default 5 attempts, 200 to 5000). */
  writeRetry?: RetryOptions;
  /** Events per catch-up page asked for; the server caps it (sync.catchup_page_size). */
  pageLimit?: number;
  /**
   * How close (in seqs) the cursor may come to oldest_seq, with more than as many seqs still
   * to page through, before the engine gives up paging and loads a snapshot, rather than fall
   * off the retention horizon mid-way (default 1000).
   */
  horizonMargin?: number;
  /** cursor_ahead retries of one cursor before the engine loads a snapshot (default 3). */
  maxCursorRetries?: number;
  /** Socket silence after which the connection counts as dead (default 60000: two heartbeats and more). */
  silenceMs?: number;
  /** Poll interval of REST catch-up when WebSocket is null (default 2000). */
  pollMs?: number;
  /** Messages listed per thread when naming a snapshot's mentions (default 5 pages). */
  hydratePages?: number;
  /** Threads whose mentions are named at once after a snapshot (default 6). */
  hydrateConcurrency?: number;
  /** Random numbers for jitter (tests make it fixed). */
  random?: () => number;
}

type QueueItem = { frame: ServerFrame } | { closed: { code: number; reason: string } };

/** Keeps a local store in step with the server (see the package README for the guarantees). */
export class SyncEngine {
  /** The typed REST client the engine uses, for any other call. */
  readonly rest: RestClient;
  private readonly storage: SyncStorage;
  private readonly WS: WebSocketConstructor | null;
  private st?: StoreState;
  /** The machine's state (machine.ts); status is read from it. */
  private machine: MachineState;
  private readonly abort = new AbortController();
  private loop?: Promise<void>;
  private socket?: WebSocketLike;
  private listeners = new Set<() => void>();
  private eventListeners = new Set<(e: Envelope) => void>();
  /** The running save loop (see save), which flush awaits. */
  private saving: Promise<void> = Promise.resolve();
  /** The error that stopped the engine (status failed). */
  lastError?: Error;
  /** Counters for tests and diagnostics. */
  readonly stats = { snapshots: 0, structureRefreshes: 0, pages: 0, connects: 0, resyncs: 0, applied: 0, skipped: 0, saves: 0 };

  constructor(private readonly o: EngineOptions) {
    this.rest = createRestClient(o);
    this.storage = o.storage ?? new MemoryStorage();
    const g = (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    this.WS = o.WebSocket === undefined ? (g ?? null) : o.WebSocket;
    this.machine = initialState({ gateway: this.WS !== null, maxCursorRetries: o.maxCursorRetries ?? 3, pollMs: o.pollMs ?? 2000 });
  }

  /** The store (read it, do not change it); undefined before the first snapshot. */
  get state(): StoreState | undefined {
    return this.st;
  }

  /** Where the engine is. */
  get status(): SyncStatus {
    return statusOf(this.machine);
  }

  /** Calls f after every change of the store or the status; returns the unsubscribe. */
  onChange(f: () => void): () => void {
    this.listeners.add(f);
    return () => this.listeners.delete(f);
  }

  /** Calls f with every event applied, after the store took it; returns the unsubscribe. */
  onEvent(f: (e: Envelope) => void): () => void {
    this.eventListeners.add(f);
    return () => this.eventListeners.delete(f);
  }

  /**
   * Loads the stored state and starts syncing; resolves once the store holds a state (after a
   * snapshot, before the mentions it only counted are named: `state.todo.hydrate` empties).
   */
  async start(): Promise<void> {
    this.st = await this.storage.load();
    if (this.st && this.st.format !== 1) this.st = undefined; // a state of another format: start anew
    if (this.st) this.st.todo ??= { refresh_structure: false, hydrate: [] };
    this.loop = this.run({ type: "start", stored: this.st !== undefined });
    // Posts that were in flight when the last run ended go out again under their own keys.
    for (const p of Object.values(this.st?.pending ?? {})) {
      if (p.state === "sending") this.resend(p.local_id).catch(() => undefined);
    }
    await this.until((s) => s !== undefined || this.status === "failed" || this.status === "stopped");
    if (this.status === "failed") throw this.lastError;
  }

  /** Stops syncing, closes the socket and saves the state. */
  async stop(): Promise<void> {
    this.abort.abort();
    for (const e of this.step({ type: "stop" })) void this.perform(e);
    await this.loop;
    await this.flush();
  }

  /** Resolves when pred holds for the store (checked on every change), or rejects after timeoutMs. */
  until(pred: (s: StoreState | undefined) => boolean, timeoutMs = 30000): Promise<void> {
    return new Promise((resolve, reject) => {
      if (pred(this.st)) return resolve();
      const t = setTimeout(() => {
        off();
        reject(new Error(`until: timed out after ${timeoutMs} ms (status ${this.status}, cursor ${this.st?.cursor})`));
      }, timeoutMs);
      const off = this.onChange(() => {
        if (pred(this.st)) {
          clearTimeout(t);
          off();
          resolve();
        }
      });
    });
  }

  /** Waits for pending saves. */
  async flush(): Promise<void> {
    await this.saving;
  }

  // ---- the driver ----

  /**
   * Feeds the machine its first input and then, effect by effect, the outcome of each, until a
   * transition asks for nothing more (stopped, failed).
   */
  private async run(first: Input): Promise<void> {
    let input: Input | undefined = first;
    while (input) {
      const effects = this.step(input);
      input = undefined;
      for (const e of effects) input = (await this.perform(e)) ?? input;
    }
  }

  /** One transition: the machine's new state, readers told when the status changed. */
  private step(input: Input): readonly Effect[] {
    const before = this.status;
    const { state, effects } = next(this.machine, input);
    this.machine = state;
    if (input.type === "resync" && state.kind === "resyncing") this.stats.resyncs++;
    if (this.status !== before) this.changed();
    return effects;
  }

  /** Performs one effect; returns the input its outcome is (none for close_socket). */
  private async perform(e: Effect): Promise<Input | undefined> {
    try {
      switch (e.type) {
        case "load_snapshot":
          await this.loadSnapshot();
          return { type: "snapshot_loaded" };
        case "catch_up":
          await this.catchUp();
          return { type: "caught_up" };
        case "open_socket":
          await this.stream();
          return { type: "socket_closed" };
        case "wait":
          await sleep(e.ms ?? backoffDelay(e.backoffAttempt ?? 0, this.reconnect(), this.o.random), this.abort.signal);
          return { type: "waited" };
        case "close_socket":
          this.socket?.close(1000, "stop");
          return undefined;
      }
    } catch (err) {
      if (this.abort.signal.aborted) return { type: "stop" };
      this.lastError = err as Error;
      return failureInput(err);
    }
  }

  private reconnect(): BackoffOptions {
    return this.o.reconnect ?? { baseMs: 250, maxMs: 30000 };
  }

  /** The store's pending work, then REST pages to the head. */
  private async catchUp(): Promise<void> {
    const st = this.requireState();
    const todo = st.todo.refresh_structure || st.todo.hydrate.length > 0;
    await this.runTodo();
    if (todo) {
      this.changed();
      this.save();
    }
    await this.restCatchUp();
  }

  /** Replaces the store with a snapshot (posts still in flight kept); its todo is left to catchUp. */
  private async loadSnapshot(): Promise<void> {
    const s = await this.fetchSnapshot();
    const st = fromSnapshot(s);
    // Posts still in flight survive; confirmed ones are in the server's history now.
    for (const [k, p] of Object.entries(this.st?.pending ?? {})) if (p.state === "sending") st.pending[k] = p;
    this.stats.snapshots++;
    this.st = st;
    // Readers get the snapshot at once (a first render need not wait for the mentions to be
    // named, one message list per mentioned thread); the named mentions follow (catchUp).
    this.changed();
    this.save();
  }

  private async fetchSnapshot(): Promise<Snapshot> {
    return call(this.rest.GET("/api/v1/sync/snapshot", { signal: this.abort.signal }));
  }

  /** Pages listEvents from the cursor until next_cursor reaches head_seq. */
  private async restCatchUp(): Promise<void> {
    const margin = this.o.horizonMargin ?? 1000;
    for (;;) {
      const st = this.requireState();
      const page = await call(
        this.rest.GET("/api/v1/events", {
          params: { query: { after: st.cursor, epoch: st.epoch, ...(this.o.pageLimit ? { limit: this.o.pageLimit } : {}) } },
          signal: this.abort.signal,
        }),
      );
      this.stats.pages++;
      if (this.st !== st) return; // replaced meanwhile
      st.oldest_seq = page.oldest_seq;
      st.head_seq = page.head_seq;
      for (const e of page.events) await this.deliver(e);
      if (this.st !== st) return;
      st.cursor = Math.max(st.cursor, page.next_cursor);
      this.changed();
      this.save();
      if (st.cursor >= page.head_seq) return;
      const remaining = page.head_seq - st.cursor;
      if (page.oldest_seq > 0 && st.cursor - page.oldest_seq < margin && remaining > margin) {
        // Retention is about to overtake the cursor: a snapshot now beats falling off later.
        throw new ResyncRequired({
          reason: "retention",
          recovery: "snapshot",
          retry_after_ms: 0,
          head_seq: page.head_seq,
          sync_epoch: page.sync_epoch,
          oldest_seq: page.oldest_seq,
        });
      }
    }
  }

  /** Applies one event unless the cursor passed it, then runs the effects it asks for. */
  private async deliver(e: Envelope): Promise<void> {
    const st = this.requireState();
    if (e.seq <= st.cursor) {
      this.stats.skipped++;
      return;
    }
    applyEvent(st, e, newEffects());
    this.stats.applied++;
    for (const f of this.eventListeners) f(e);
    await this.runTodo();
  }

  /** Does the work reducers asked for (kept in the state until done). */
  private async runTodo(): Promise<void> {
    const st = this.requireState();
    if (st.todo.refresh_structure) {
      await this.refreshStructure();
      if (this.st !== st) return;
      st.todo.refresh_structure = false;
    }
    // Threads are named a few at a time: one after another, a snapshot that counted mentions
    // in 500 threads took 500 round trips in a row before the mentions were named.
    while (st.todo.hydrate.length > 0 && this.st === st) {
      const queue = [...st.todo.hydrate];
      let failed: unknown;
      const worker = async () => {
        for (let id = queue.shift(); id !== undefined && failed === undefined && this.st === st; id = queue.shift()) {
          try {
            await this.hydrate(new Set([id]));
          } catch (err) {
            failed ??= err;
            return;
          }
          st.todo.hydrate = st.todo.hydrate.filter((x) => x !== id);
        }
      };
      const n = Math.max(1, Math.min(this.o.hydrateConcurrency ?? 6, queue.length));
      await Promise.all(Array.from({ length: n }, worker));
      if (failed !== undefined) throw failed;
    }
  }

  /** After permissions.changed: the structure from a snapshot, the cursor kept. */
  private async refreshStructure(): Promise<void> {
    const st = this.requireState();
    const s = await this.fetchSnapshot();
    if (this.st !== st) return;
    if (s.sync_epoch !== st.epoch) {
      throw new ResyncRequired({ reason: "epoch_changed", recovery: "snapshot", retry_after_ms: 0, head_seq: s.head_seq, sync_epoch: s.sync_epoch, oldest_seq: st.oldest_seq });
    }
    this.stats.structureRefreshes++;
    mergeStructure(st, s);
  }

  /** Names the mentions of threads a snapshot only counted, from their messages. */
  private async hydrate(threads: Set<string>): Promise<void> {
    for (const id of threads) {
      const st = this.requireState();
      const th = st.threads[id];
      if (!th) continue;
      let after = Math.max(th.last_read_seq, th.floor);
      const got: Message[] = [];
      for (let i = 0; i < (this.o.hydratePages ?? 5); i++) {
        let list;
        try {
          list = await call(
            this.rest.GET("/api/v1/threads/{thread_id}/messages", { params: { path: { thread_id: id }, query: { after } }, signal: this.abort.signal }),
          );
        } catch (err) {
          if (err instanceof ApiError && (err.status === 403 || err.status === 404)) break; // gone from view
          throw err;
        }
        got.push(...list.items);
        if (list.items.length === 0 || list.next_cursor === undefined || list.next_cursor <= after) break;
        after = list.next_cursor;
      }
      if (this.st === st) hydrateMentions(st, id, got);
    }
  }

  /** Runs the gateway until its socket closes with a code to resume after; throws to recover. */
  private stream(): Promise<void> {
    const st = this.requireState();
    const url = this.o.baseUrl.replace(/^http/, "ws").replace(/\/$/, "") + "/api/v1/gateway";
    const ws = new this.WS!(url);
    this.socket = ws;
    this.stats.connects++;
    const queue: QueueItem[] = [];
    let resync: ResyncRequired["body"] | undefined;
    let lastError: ErrorFrame | undefined;
    let silence: ReturnType<typeof setTimeout> | undefined;
    const silenceMs = this.o.silenceMs ?? 60000;
    const armSilence = () => {
      clearTimeout(silence);
      silence = setTimeout(() => ws.close(SILENCE_CLOSE, "silence"), silenceMs);
    };
    return new Promise<void>((resolve, reject) => {
      let pumping = false;
      let finished = false;
      const finish = (f: () => void) => {
        if (finished) return;
        finished = true;
        clearTimeout(silence);
        ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
        if (this.socket === ws) this.socket = undefined;
        f();
      };
      const pump = async () => {
        if (pumping) return;
        pumping = true;
        try {
          while (queue.length > 0) {
            const item = queue.shift()!;
            if ("closed" in item) {
              const err = closeOutcome(item.closed.code, resync, lastError);
              return finish(() => (err ? reject(err) : resolve()));
            }
            const f = item.frame;
            if (this.st !== st) {
              ws.close(1000, "state replaced");
              continue;
            }
            switch (f.op) {
              case "event":
                await this.deliver(f.event);
                break;
              case "cursor":
              case "catchup.complete":
                if (this.st === st) st.cursor = Math.max(st.cursor, f.cursor);
                if (f.op === "catchup.complete") this.step({ type: "socket_live" }); // no effect to perform
                break;
              case "resync_required":
                resync = f;
                break;
              case "error":
                lastError = f;
                break;
            }
            if (queue.length === 0) {
              this.changed();
              this.save();
            }
          }
        } catch (err) {
          ws.close(1000, "client error");
          finish(() => reject(err));
        } finally {
          pumping = false;
        }
      };
      ws.onopen = () => {
        armSilence();
        const send = (f: ClientFrame) => ws.send(JSON.stringify(f));
        send({ op: "auth", token: this.o.token });
        send({ op: "resume", after: st.cursor, epoch: st.epoch });
      };
      ws.onmessage = (ev) => {
        armSilence();
        let frame: ServerFrame;
        try {
          frame = JSON.parse(typeof ev.data === "string" ? ev.data : String(ev.data)) as ServerFrame;
        } catch {
          return;
        }
        queue.push({ frame });
        void pump();
      };
      ws.onerror = () => {
        // onclose follows with the code.
      };
      ws.onclose = (ev) => {
        queue.push({ closed: { code: ev.code, reason: ev.reason } });
        void pump();
      };
      armSilence(); // a connect that hangs counts as silence too
      if (this.abort.signal.aborted) ws.close(1000, "stop");
    });
  }

  // ---- writes ----

  private retry(): RetryOptions {
    return this.o.writeRetry ?? { attempts: 5, baseMs: 200, maxMs: 5000 };
  }

  /**
   * Runs a write with an Idempotency-Key per logical action, retried with that key on network
   * errors, 5xx and 429 (Retry-After), so it is carried out once.
   */
  write<T>(send: (key: string) => Promise<{ data?: T; error?: unknown; response: Response }>, key?: string): Promise<T> {
    return withRetries(send, { ...this.retry(), key, random: this.o.random, signal: this.abort.signal });
  }

  /**
   * Posts a message optimistically: it is pending in the store at once (under its
   * Idempotency-Key), and leaves the pending list when its message.created arrives (matched by
   * the id the answer gave), or is marked failed when the post fails for good.
   */
  async postMessage(threadId: string, content: string): Promise<Message> {
    const key = newIdempotencyKey();
    const st = this.requireState();
    st.pending[key] = { local_id: key, thread_id: threadId, content_md: content, state: "sending" };
    this.changed();
    this.save(); // a restart while it is in flight sends it again, under the same key
    return this.sendPending(key);
  }

  /**
   * Sends a pending post again under its own Idempotency-Key (its local_id): after it failed,
   * or after a restart while it was in flight. The server carries it out once within
   * `http.idempotency_ttl`, however often it is sent.
   */
  async resend(localId: string): Promise<Message> {
    const p = this.requireState().pending[localId];
    if (!p) throw new Error(`no pending post ${localId}`);
    p.state = "sending";
    delete p.error;
    this.changed();
    return this.sendPending(localId);
  }

  private async sendPending(key: string): Promise<Message> {
    const { thread_id: threadId, content_md: content } = this.requireState().pending[key]!;
    try {
      const m = await this.write(
        (k) =>
          this.rest.POST("/api/v1/threads/{thread_id}/messages", {
            params: { path: { thread_id: threadId }, header: { "Idempotency-Key": k } },
            body: { content_md: content },
          }),
        key,
      );
      const now = this.st;
      const p = now?.pending[key];
      if (now && p) {
        if (now.messages[threadId]?.[m.id]) delete now.pending[key];
        else Object.assign(p, { id: m.id, state: "sent" });
      }
      this.changed();
      this.save();
      return m;
    } catch (err) {
      const p = this.st?.pending[key];
      if (p) Object.assign(p, { state: "failed", error: String(err) });
      this.changed();
      this.save();
      throw err;
    }
  }

  /** Records how far the reader has read a thread (its read_state.updated updates the store). */
  async markRead(threadId: string, lastReadSeq: number): Promise<void> {
    await this.write((_k) =>
      this.rest.PUT("/api/v1/threads/{thread_id}/read-state", { params: { path: { thread_id: threadId } }, body: { last_read_seq: lastReadSeq } }),
    );
  }

  // The other writes of a client, each under one Idempotency-Key across its retries (write).
  // What they change reaches the store through their events, as every other reader's does.

  /** Starts a thread in a channel with its first message (createThread); returns the thread. */
  createThread(channelId: string, contentMd: string, title?: string): Promise<Schemas["Thread"]> {
    return this.write((key) =>
      this.rest.POST("/api/v1/channels/{channel_id}/threads", {
        params: { path: { channel_id: channelId }, header: { "Idempotency-Key": key } },
        body: { content_md: contentMd, ...(title ? { title } : {}) },
      }),
    );
  }

  /** Replaces a message's text (editMessage, the author's own); returns the message. */
  editMessage(messageId: string, contentMd: string): Promise<Message> {
    return this.write(() => this.rest.PATCH("/api/v1/messages/{message_id}", { params: { path: { message_id: messageId } }, body: { content_md: contentMd } }));
  }

  /** Deletes a message for everyone (deleteMessage: it stays as a redacted entry). */
  async deleteMessage(messageId: string): Promise<void> {
    await this.write(() => this.rest.DELETE("/api/v1/messages/{message_id}", { params: { path: { message_id: messageId } } }));
  }

  /** Adds the reader's reaction to a message (addReaction; adding it twice is one reaction). */
  async addReaction(messageId: string, reaction: string): Promise<void> {
    await this.write(() => this.rest.PUT("/api/v1/messages/{message_id}/reactions/{reaction}", { params: { path: { message_id: messageId, reaction } } }));
  }

  /** Takes the reader's reaction back (removeReaction). */
  async removeReaction(messageId: string, reaction: string): Promise<void> {
    await this.write(() => this.rest.DELETE("/api/v1/messages/{message_id}/reactions/{reaction}", { params: { path: { message_id: messageId, reaction } } }));
  }

  /** Saves the reader's draft of a channel, or of a thread in it (saveDraft). */
  async saveDraft(channelId: string, contentMd: string, threadId?: string): Promise<void> {
    await this.write(() =>
      this.rest.PUT("/api/v1/channels/{channel_id}/draft", { params: { path: { channel_id: channelId } }, body: { content_md: contentMd, ...(threadId ? { thread_id: threadId } : {}) } }),
    );
  }

  /** Deletes the reader's draft of a channel, or of a thread in it (deleteDraft). */
  async deleteDraft(channelId: string, threadId?: string): Promise<void> {
    await this.write(() =>
      this.rest.DELETE("/api/v1/channels/{channel_id}/draft", { params: { path: { channel_id: channelId }, query: threadId ? { thread_id: threadId } : {} } }),
    );
  }

  /** Loads a thread's messages after a seq into the store (history the events did not bring). */
  async loadMessages(threadId: string, after = 0): Promise<Message[]> {
    const list = await call(this.rest.GET("/api/v1/threads/{thread_id}/messages", { params: { path: { thread_id: threadId }, query: { after } } }));
    const st = this.requireState();
    for (const m of list.items) {
      if (st.messages[threadId]?.[m.id]?.redacted) continue;
      (st.messages[threadId] ??= {})[m.id] = m;
    }
    this.changed();
    return list.items;
  }

  // ---- plumbing ----

  private requireState(): StoreState {
    if (!this.st) throw new Error("the engine has no state yet");
    return this.st;
  }

  private changed(): void {
    for (const f of this.listeners) f();
  }

  /**
   * Saves the state, coalesced: one save at a time, and the saves asked for while one runs
   * become one more, of the state as it is when that one ends. A save serialises or clones the
   * whole state (IndexedDB's put on the page's thread), so a burst of changes (a catch-up, a
   * busy live stream) saved once per change spent the page's time on copies that the next one
   * overwrote. The storage takes its copy when save is called, so the engine makes none of its
   * own (it did: a second whole copy per save, 57 of the 682 ms of make bench's cold start).
   * Each save is still of one whole state (the cursor never without the store it
   * acknowledges): between two of the engine's steps the store is consistent.
   */
  private save(): void {
    if (!this.st) return;
    this.saveWanted = true;
    if (this.saveRunning) return;
    this.saveRunning = true;
    this.saving = this.saveLoop();
  }

  private saveWanted = false;
  private saveRunning = false;

  private async saveLoop(): Promise<void> {
    try {
      while (this.saveWanted && this.st) {
        this.saveWanted = false;
        try {
          // The live state, not a copy: a storage keeps it as it is now (SyncStorage.save).
          await this.storage.save(this.st);
          this.stats.saves++;
        } catch (err) {
          this.lastError = err as Error;
        }
      }
    } finally {
      this.saveRunning = false;
    }
  }
}

export { newIdempotencyKey };
// FatalSyncError and SyncStatus were born here; they live in machine.ts now, and stay importable from here.
export { FatalSyncError, type SyncStatus } from "./machine.js";
