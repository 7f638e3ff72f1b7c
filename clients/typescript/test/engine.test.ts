import { describe, expect, it } from "vitest";
import { FatalSyncError, SyncEngine, type EngineOptions } from "../src/engine.js";
import { MemoryStorage, FileStorage } from "../src/storage.js";
import { threadMessages } from "../src/store.js";
import { AuthError } from "../src/rest.js";
import { FakeServer, EPOCH2, ME, THREAD, problem } from "./fake.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

function engine(server: FakeServer, over: Partial<EngineOptions> = {}): SyncEngine {
  return new SyncEngine({
    baseUrl: "http://fake.example.com",
    token: "good",
    fetch: server.fetch as typeof fetch,
    WebSocket: server.WebSocket,
    reconnect: { baseMs: 2, maxMs: 10 },
    writeRetry: { attempts: 5, baseMs: 1, maxMs: 5 },
    pageLimit: 2,
    random: () => 0.5,
    ...over,
  });
}

/** The seqs of message.created events the engine applied, in order. */
function applied(e: SyncEngine): number[] {
  const seqs: number[] = [];
  e.onEvent((ev) => seqs.push(ev.seq));
  return seqs;
}

const live = (e: SyncEngine) => e.until(() => e.status === "live");
const atSeq = (e: SyncEngine, seq: number) => e.until((s) => (s?.cursor ?? 0) >= seq);

describe("SyncEngine against a scripted server", () => {
  it("starts from a snapshot, catches up page by page, then goes live without gap or duplicate at the switch", async () => {
    const server = new FakeServer();
    server.post("before the snapshot");
    server.snapshotHook = () => {
      // Written between the snapshot and the first page: catch-up must bring them.
      for (let i = 0; i < 5; i++) server.post(`after ${i}`);
      server.invisible(3);
    };
    const e = engine(server);
    const seqs = applied(e);
    await e.start();
    await live(e);
    server.post("live 1");
    const last = server.post("live 2");
    await atSeq(e, last.seq);
    expect(server.snapshots).toBe(1);
    expect(seqs).toEqual([2, 3, 4, 5, 6, 10, 11]);
    expect(e.state!.cursor).toBe(11);
    const pages = server.log.filter((l) => l.path === "/api/v1/events");
    expect(pages.length).toBeGreaterThanOrEqual(3); // page limit 2: several pages to the head
    expect(threadMessages(e.state!, THREAD).map((m) => m.content_md)).toEqual(["after 0", "after 1", "after 2", "after 3", "after 4", "live 1", "live 2"]);
    await e.stop();
  });

  it("skips events the gateway replays at or below the cursor (at least once delivery)", async () => {
    const server = new FakeServer();
    server.resumeOverlap = 3;
    for (let i = 0; i < 4; i++) server.post();
    const e = engine(server);
    const seqs = applied(e);
    await e.start();
    await live(e);
    const last = server.post();
    await atSeq(e, last.seq);
    expect(seqs).toEqual([5]);
    expect(e.stats.skipped).toBeGreaterThanOrEqual(3);
    await e.stop();
  });

  it("starts from the stored cursor without a snapshot", async () => {
    const server = new FakeServer();
    const storage = new MemoryStorage();
    const first = engine(server, { storage });
    await first.start();
    await live(first);
    server.post("one");
    await atSeq(first, 1);
    await first.stop();
    server.post("two");
    server.post("three");
    const second = engine(server, { storage });
    const seqs = applied(second);
    await second.start();
    await atSeq(second, 3);
    expect(server.snapshots).toBe(1);
    expect(seqs).toEqual([2, 3]);
    expect(threadMessages(second.state!, THREAD).map((m) => m.content_md)).toEqual(["one", "two", "three"]);
    await second.stop();
  });

  it("falls back to REST catch-up while the socket is down, then resumes live", async () => {
    const server = new FakeServer();
    const e = engine(server);
    const seqs = applied(e);
    await e.start();
    await live(e);
    server.post("a");
    await atSeq(e, 1);
    server.refuseSockets = true;
    server.killSockets(1006);
    await e.until(() => e.status !== "live");
    server.post("b");
    server.post("c");
    await atSeq(e, 3); // over REST: no socket accepts
    const connects = e.stats.connects;
    server.post("d");
    await atSeq(e, 4); // still over REST, after another refused connect
    expect(e.stats.connects).toBeGreaterThan(connects);
    expect(server.sockets.length).toBe(0);
    expect(e.status).not.toBe("live");
    server.refuseSockets = false;
    await live(e);
    server.post("e");
    await atSeq(e, 5);
    expect(seqs).toEqual([1, 2, 3, 4, 5]);
    await e.stop();
  });

  for (const reason of ["epoch_changed", "retention", "too_far_behind"] as const) {
    it(`recovers from 410 ${reason} on REST with a new snapshot after retry_after_ms`, async () => {
      const server = new FakeServer();
      const storage = new MemoryStorage();
      const first = engine(server, { storage, WebSocket: null, pollMs: 5 });
      await first.start();
      server.post("seen");
      await atSeq(first, 1);
      await first.stop();
      for (let i = 0; i < 6; i++) server.post("missed");
      if (reason === "epoch_changed") server.epoch = EPOCH2;
      if (reason === "retention") server.oldest = 4;
      if (reason === "too_far_behind") server.catchupMax = 3;
      const e = engine(server, { storage, WebSocket: null, pollMs: 5 });
      await e.start();
      await e.until((s) => s?.epoch === server.epoch && s.cursor === server.head && server.snapshots === 2);
      const gone = server.log.filter((l) => l.status === 410);
      expect(gone.length).toBe(1);
      expect(e.stats.resyncs).toBe(1);
      await e.stop();
    });
  }

  it("retries the same cursor after cursor_ahead, and loads a snapshot when it keeps failing", async () => {
    const server = new FakeServer();
    for (let i = 0; i < 3; i++) server.post();
    const storage = new MemoryStorage();
    const first = engine(server, { storage, WebSocket: null });
    await first.start();
    await atSeq(first, 3);
    await first.stop();
    server.head = 1; // a lagging replica: the cursor is ahead
    server.events = server.events.slice(0, 1);
    const e = engine(server, { storage, WebSocket: null, maxCursorRetries: 2, pollMs: 5 });
    await e.start();
    await e.until(() => server.snapshots === 2);
    const gone = server.log.filter((l) => l.status === 410);
    expect(gone.length).toBe(3); // the first try and two retries of the same cursor
    expect(gone.every((l) => l.query.includes("after=3"))).toBe(true);
    await e.until((s) => s?.cursor === 1);
    await e.stop();
  });

  it("recovers from the gateway's resync_required frame (close 4004) with a snapshot", async () => {
    const server = new FakeServer();
    const e = engine(server);
    await e.start();
    await live(e);
    server.post();
    await atSeq(e, 1);
    // The epoch rotates while the socket is down; REST and the socket both say so.
    server.refuseSockets = true;
    server.killSockets(1001);
    server.epoch = EPOCH2;
    server.post();
    server.refuseSockets = false;
    await e.until((s) => s?.epoch === EPOCH2 && e.status === "live");
    expect(e.stats.resyncs).toBeGreaterThanOrEqual(1);
    expect(server.snapshots).toBe(2);
    await e.stop();
  });

  it("loads a snapshot before the retention horizon overtakes a cursor that is far behind", async () => {
    const server = new FakeServer();
    const storage = new MemoryStorage();
    const first = engine(server, { storage, WebSocket: null });
    await first.start();
    await first.stop();
    for (let i = 0; i < 40; i++) server.post();
    server.oldestStepPerPage = 3; // retention runs faster than the client pages (2 a page)
    const e = engine(server, { storage, WebSocket: null, horizonMargin: 5, pageLimit: 2, pollMs: 5 });
    await e.start();
    await e.until((s) => server.snapshots === 2 && s?.cursor === 40);
    expect(server.log.filter((l) => l.status === 410).length).toBe(0); // it never fell off
    await e.stop();
  });

  it("posts once with one Idempotency-Key through a 503 and a lost answer, and reconciles the optimistic message", async () => {
    const server = new FakeServer();
    const e = engine(server);
    await e.start();
    await live(e);
    server.faults.push((req) => (req.method === "POST" ? problem(503, "unavailable", 0) : undefined));
    server.dropNextPostAnswer = true;
    const changes: number[] = [];
    e.onChange(() => changes.push(Object.keys(e.state!.pending).length));
    const m = await e.postMessage(THREAD, "hello");
    const posts = server.log.filter((l) => l.method === "POST");
    expect(posts.map((p) => p.status)).toEqual([503, "network", 201]);
    expect(new Set(posts.map((p) => p.idempotencyKey)).size).toBe(1);
    expect(server.messages.size).toBe(1);
    await e.until((s) => Object.keys(s!.pending).length === 0 && s!.messages[THREAD]?.[m.id] !== undefined);
    expect(changes).toContain(1); // it was pending first
    expect(threadMessages(e.state!, THREAD).map((x) => x.id)).toEqual([m.id]);
    await e.stop();
  });

  it("sends a post that was in flight when the last run ended again, under the same key, and it is carried out once", async () => {
    const server = new FakeServer();
    const storage = new MemoryStorage();
    const first = engine(server, { storage });
    await first.start();
    await first.stop();
    // The last run had sent the post and stopped before the answer came.
    const key = "in-flight-post-1";
    const st = (await storage.load())!;
    st.pending[key] = { local_id: key, thread_id: THREAD, content_md: "sent before the crash", state: "sending" };
    await storage.save(st);
    await server.fetch(new Request(`http://fake.example.com/api/v1/threads/${THREAD}/messages`, {
      method: "POST",
      headers: { Authorization: "Bearer good", "Idempotency-Key": key, "Content-Type": "application/json" },
      body: JSON.stringify({ content_md: "sent before the crash" }),
    }));
    const second = engine(server, { storage });
    await second.start();
    await second.until((s) => Object.keys(s!.pending).length === 0 && threadMessages(s!, THREAD).length === 1);
    const posts = server.log.filter((l) => l.method === "POST");
    expect(posts.map((p) => [p.idempotencyKey, p.status])).toEqual([[key, 201], [key, 201]]);
    expect(server.messages.size).toBe(1);
    await second.stop();
  });

  it("marks a post failed, without retrying, on a 4xx", async () => {
    const server = new FakeServer();
    const e = engine(server);
    await e.start();
    server.faults.push((req) => (req.method === "POST" ? problem(409, "conflict") : undefined));
    await expect(e.postMessage(THREAD, "x")).rejects.toThrow(/409/);
    expect(Object.values(e.state!.pending).map((p) => p.state)).toEqual(["failed"]);
    expect(server.log.filter((l) => l.method === "POST").length).toBe(1);
    await e.stop();
  });

  it("waits retry_after_ms after error unavailable and close 1013, then resumes", async () => {
    const server = new FakeServer();
    server.unavailableResumes = 2;
    const e = engine(server, { reconnect: { baseMs: 5000, maxMs: 5000 } }); // backoff would wait seconds
    const t0 = Date.now();
    await e.start();
    await live(e);
    expect(e.stats.connects).toBe(3);
    expect(Date.now() - t0).toBeLessThan(1500);
    await e.stop();
  });

  it("closes a socket that stays silent and resumes on a new one", async () => {
    const server = new FakeServer();
    server.silent = true;
    const e = engine(server, { silenceMs: 30 });
    await e.start();
    await e.until(() => e.stats.connects >= 2);
    server.silent = false;
    await live(e);
    server.post("after the silence");
    await atSeq(e, 1);
    await e.stop();
  });

  for (const [code, close, want] of [["token_revoked", 4008, AuthError], ["validation_failed", 4000, FatalSyncError]] as const) {
    it(`stops with ${want.name} on close ${close} (${code}) instead of reconnecting`, async () => {
      const server = new FakeServer();
      server.failNextResume = { code, close };
      const e = engine(server);
      await e.start();
      await e.until(() => e.status === "failed");
      expect(e.lastError).toBeInstanceOf(want);
      expect(e.stats.connects).toBe(1);
    });
  }

  it("stops with an AuthError when the token is refused", async () => {
    const server = new FakeServer();
    const e = engine(server, { token: "bad" });
    await expect(e.start()).rejects.toBeInstanceOf(AuthError);
    expect(e.status).toBe("failed");
  });

  it("counts a snapshot's mentions by name once it lists the thread's messages", async () => {
    const server = new FakeServer();
    server.snapshotUnread = [{ thread_id: THREAD, channel_id: "00000000-0000-4000-8000-0000000000c1", last_message_seq: 2, last_read_seq: 0, unread_count: 2, mention_count: 1 }];
    server.threadMessages = [
      { id: "00000000-0000-4000-8000-00000000f001", thread_id: THREAD, channel_id: "00000000-0000-4000-8000-0000000000c1", seq: 1, author_id: ME, content_md: "a", mention_ids: [], created_at: "2026-12-01T09:30:15Z", redacted: false },
      { id: "00000000-0000-4000-8000-00000000f002", thread_id: THREAD, channel_id: "00000000-0000-4000-8000-0000000000c1", seq: 2, author_id: ME, content_md: "@sam", mention_ids: [ME], created_at: "2026-12-01T09:30:15Z", redacted: false },
    ];
    const e = engine(server, { WebSocket: null });
    await e.start(); // resolves with the snapshot; the mentions are named after it
    await e.until((s) => s !== undefined && s.todo.hydrate.length === 0);
    const th = e.state!.threads[THREAD]!;
    expect(th.base_mentions).toBe(0);
    expect(Object.keys(th.mentions)).toEqual(["00000000-0000-4000-8000-00000000f002"]);
    await e.stop();
  });

  it("coalesces saves: the changes made while a save runs are saved once, whole, when it ends", async () => {
    const server = new FakeServer();
    let last = 0;
    server.snapshotHook = () => {
      for (let i = 0; i < 20; i++) last = server.post(`after ${i}`).seq; // ten catch-up pages of two
    };
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    class GatedStorage extends MemoryStorage {
      override async save(st: Parameters<MemoryStorage["save"]>[0]): Promise<void> {
        const copy = structuredClone(st); // taken when called, as SyncStorage.save asks
        await gate;
        return super.save(copy);
      }
    }
    const storage = new GatedStorage();
    const e = engine(server, { storage, WebSocket: null, pollMs: 60000 });
    await e.start();
    await atSeq(e, last);
    expect(e.stats.pages).toBeGreaterThanOrEqual(10); // each page asked for a save
    expect(storage.saves).toBe(0); // the first save waits at the gate
    release();
    await e.flush();
    // The one that waited, then one of the state as it is now: not one per page.
    expect(storage.saves).toBe(2);
    expect(e.stats.saves).toBe(2);
    expect((await storage.load())!.cursor).toBe(last);
    await e.stop();
  });

  it("names the mentions of a snapshot's threads with a bounded number of notifications, not one per thread", async () => {
    const server = new FakeServer();
    const threads = 60;
    server.snapshotUnread = Array.from({ length: threads }, (_, i) => ({
      thread_id: `00000000-0000-4000-8000-${(0xa000 + i).toString(16).padStart(12, "0")}`,
      channel_id: "00000000-0000-4000-8000-0000000000c1",
      last_message_seq: 2,
      last_read_seq: 0,
      unread_count: 2,
      mention_count: 1,
    }));
    const e = engine(server, { WebSocket: null, pollMs: 60000 });
    let notified = 0;
    e.onChange(() => notified++);
    await e.start();
    await e.until((s) => s !== undefined && s.todo.hydrate.length === 0);
    expect(server.log.filter((l) => l.path.endsWith("/messages")).length).toBe(threads);
    // A reader (the web client re-renders its whole sidebar) hears of the snapshot, its named
    // mentions and the status changes: a handful of times, whatever the number of threads.
    expect(notified).toBeLessThanOrEqual(6);
    await e.stop();
  });

  it("keeps its state in a file across engines", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bothy-sdk-"));
    try {
      const server = new FakeServer();
      const storage = new FileStorage(join(dir, "state.json"));
      const a = engine(server, { storage, WebSocket: null, pollMs: 5 });
      await a.start();
      server.post("kept");
      await atSeq(a, 1);
      await a.stop();
      expect((await storage.load())!.cursor).toBe(1);
      const b = engine(server, { storage, WebSocket: null, pollMs: 5 });
      await b.start();
      expect(server.snapshots).toBe(1);
      expect(threadMessages(b.state!, THREAD).map((m) => m.content_md)).toEqual(["kept"]);
      await b.stop();
      await storage.clear();
      expect(await storage.load()).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
