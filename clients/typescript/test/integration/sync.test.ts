// The engine against a real bothy serve: after every disturbance (a socket killed mid-stream, a
// server restart, a revoked grant, a rotated epoch, a cursor past the catch-up horizon) Sam's
// store equals a fresh snapshot of Sam.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { SyncEngine, type WebSocketLike } from "../../src/engine.js";
import { FileStorage } from "../../src/storage.js";
import { snapshotView, storeView, threadMessages } from "../../src/store.js";
import type { Snapshot } from "../../src/events.js";
import { BothyServer } from "./server.js";

const bin = process.env.BOTHY_BIN;
if (!bin) throw new Error("BOTHY_BIN names the bothy binary to test against (make sdk-test builds it)");

// A catch-up horizon small enough to fall behind it on purpose.
const CATCHUP_MAX_EVENTS = 60;

/** ws's WebSocket, remembered so a test can cut the connection under the engine. */
const sockets: WebSocket[] = [];
class TrackedWebSocket extends WebSocket {
  constructor(url: string) {
    super(url);
    sockets.push(this);
  }
}

let server: BothyServer;
let sam: { id: string; token: string };
let support: string, tickets: string, ticketThread: string;
let dir: string;

function newEngine(storageFile: string): SyncEngine {
  return new SyncEngine({
    baseUrl: server.baseUrl,
    token: sam.token,
    storage: new FileStorage(join(dir, storageFile)),
    WebSocket: TrackedWebSocket as unknown as new (url: string) => WebSocketLike,
    reconnect: { baseMs: 50, maxMs: 500 },
    writeRetry: { attempts: 60, baseMs: 50, maxMs: 500 }, // outlasts a server restart
    silenceMs: 5000,
  });
}

async function snapshotOfSam(): Promise<Snapshot> {
  return server.call<Snapshot>("GET", "/api/v1/sync/snapshot", undefined, 200, sam.token);
}

/** Waits until the engine stands at a snapshot's head, then compares its view with the snapshot. */
async function expectStoreEqualsSnapshot(e: SyncEngine): Promise<void> {
  const deadline = Date.now() + 20000;
  for (;;) {
    const s = await snapshotOfSam();
    try {
      await e.until((st) => (st?.cursor ?? 0) >= s.head_seq && !st!.todo.refresh_structure && st!.todo.hydrate.length === 0, 6000);
    } catch {
      // a heartbeat's cursor frame may still be on its way; try with a new snapshot
    }
    if (e.state!.cursor === s.head_seq && !e.state!.todo.refresh_structure) {
      if (process.env.SDK_DEBUG) console.log(JSON.stringify({ err: String(e.lastError), stats: e.stats, threads: e.state!.threads, channels: Object.keys(e.state!.channels), pv: e.state!.permission_version, spv: s.permission_version, unread: s.unread_threads }, null, 1));
      expect(storeView(e.state!)).toEqual(snapshotView(s));
      return;
    }
    if (Date.now() > deadline) throw new Error(`the engine's cursor ${e.state!.cursor} never met the head ${s.head_seq}`);
  }
}

async function post(thread: string, content: string): Promise<{ id: string; seq: number }> {
  return server.call("POST", `/api/v1/threads/${thread}/messages`, { content_md: content }, 201);
}

/** The thread's messages as the server lists them. */
async function serverMessages(thread: string): Promise<{ id: string; seq: number; content_md: string }[]> {
  const out: { id: string; seq: number; content_md: string }[] = [];
  let after = 0;
  for (;;) {
    const page = await server.call<{ items: { id: string; seq: number; content_md: string }[]; next_cursor?: number }>(
      "GET", `/api/v1/threads/${thread}/messages?after=${after}`, undefined, 200, sam.token);
    out.push(...page.items);
    if (page.items.length === 0 || page.next_cursor === undefined) return out;
    after = page.next_cursor;
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "bothy-sdk-state-"));
  server = new BothyServer(bin, {
    BOTHY_SYNC_RESYNC_RETRY_BASE: "50ms",
    BOTHY_GATEWAY_HEARTBEAT_INTERVAL: "1s",
    BOTHY_SYNC_CATCHUP_MAX_EVENTS: String(CATCHUP_MAX_EVENTS),
  });
  await server.start();
  const person = await server.call<{ id: string }>("POST", "/api/v1/people", { display_name: "Sam", handle: "sam", email: "sam@example.com" }, 201);
  const token = await server.call<{ token: string }>("POST", `/api/v1/principals/${person.id}/tokens`, {}, 201);
  sam = { id: person.id, token: token.token };
  support = (await server.call<{ id: string }>("POST", "/api/v1/spaces", { name: "Support" }, 201)).id;
  tickets = (await server.call<{ id: string }>("POST", `/api/v1/spaces/${support}/channels`, { name: "tickets" }, 201)).id;
  await server.call("POST", "/api/v1/grants", { principal_id: sam.id, resource_kind: "space", resource_id: support, role: "member" }, 201);
  ticketThread = (await server.call<{ id: string }>("POST", `/api/v1/channels/${tickets}/threads`, { title: "Printer", content_md: "@sam the printer is jammed" }, 201)).id;
}, 120000);

afterAll(async () => {
  await server?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// Restarts, backups and restores take seconds each on a busy machine.
describe("the sync engine against bothy serve", { timeout: 90000 }, () => {
  let e: SyncEngine;

  it("starts from a snapshot, goes live, and its store equals a fresh snapshot after every kind of write", async () => {
    e = newEngine("sam.json");
    await e.start();
    await e.until(() => e.status === "live");
    await expectStoreEqualsSnapshot(e);
    expect(e.state!.threads[ticketThread]!.base_mentions).toBe(0); // the snapshot's mention was named

    const launch = (await server.call<{ id: string }>("POST", `/api/v1/channels/${tickets}/threads`, { title: "Launch, @sam", content_md: "Launch plan, @sam" }, 201)).id;
    const m = await post(launch, "@sam the banner is ready");
    await server.call("PATCH", `/api/v1/messages/${m.id}`, { content_md: "The banner is ready" }, 200);
    const spare = await post(ticketThread, "Checking, @sam");
    await server.call("DELETE", `/api/v1/messages/${spare.id}`, undefined, 204);
    const mine = await e.postMessage(launch, "Looks good");
    await e.markRead(ticketThread, 1);
    await server.call("PUT", `/api/v1/channels/${tickets}/draft`, { content_md: "Half a reply" }, 200, sam.token);
    await server.call("PUT", "/api/v1/me/settings/theme", { value: "dark" }, 200, sam.token);
    await server.call("PUT", "/api/v1/me/sidebar", { sections: [{ key: "work", title: "Work", collapsed: false, channel_ids: [tickets] }] }, 200, sam.token);
    await server.call("POST", `/api/v1/spaces/${support}/channels`, { name: "press" }, 201);

    await expectStoreEqualsSnapshot(e);
    await e.until((s) => Object.keys(s!.pending).length === 0);
    expect(e.state!.messages[launch]![mine.id]!.content_md).toBe("Looks good");
    expect(threadMessages(e.state!, launch).map((x) => x.content_md)).toEqual(["Launch plan, @sam", "The banner is ready", "Looks good"]);
    expect(e.state!.drafts[tickets]!.content_md).toBe("Half a reply");
    expect(e.stats.snapshots).toBe(1);
  });

  it("loses nothing and repeats nothing when the socket is killed mid-stream", async () => {
    const before = e.stats.connects;
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < 30; i++) {
      writes.push(post(ticketThread, `burst ${i}`));
      if (i === 10) sockets[sockets.length - 1]!.terminate(); // no close frame: the client sees 1006
    }
    await Promise.all(writes);
    await expectStoreEqualsSnapshot(e);
    expect(e.stats.connects).toBeGreaterThan(before);
    const want = (await serverMessages(ticketThread)).map((m) => [m.seq, m.id, m.content_md]);
    const got = threadMessages(e.state!, ticketThread).map((m) => [m.seq, m.id, m.content_md]);
    expect(got.slice(-30)).toEqual(want.slice(-30));
    expect(got.filter((g) => String(g[2]).startsWith("burst")).length).toBe(30);
  });

  it("catches up after the server restarts, and a post made while it was down goes out once", async () => {
    await server.stop();
    await e.until(() => e.status !== "live");
    const whileDown = e.postMessage(ticketThread, "posted while the server was down");
    await server.start();
    await post(ticketThread, "after the restart");
    await whileDown;
    await e.until(() => e.status === "live");
    await expectStoreEqualsSnapshot(e);
    await e.until((s) => Object.keys(s!.pending).length === 0);
    const texts = threadMessages(e.state!, ticketThread).map((m) => m.content_md);
    expect(texts.filter((t) => t === "posted while the server was down").length).toBe(1);
    expect(texts).toContain("after the restart");
    const onServer = (await serverMessages(ticketThread)).map((m) => m.content_md);
    expect(onServer.filter((t) => t === "posted while the server was down").length).toBe(1);
  });

  it("follows a grant and its revoke", async () => {
    const finance = (await server.call<{ id: string }>("POST", "/api/v1/spaces", { name: "Finance" }, 201)).id;
    const ledger = (await server.call<{ id: string }>("POST", `/api/v1/spaces/${finance}/channels`, { name: "ledger" }, 201)).id;
    await server.call("POST", `/api/v1/channels/${ledger}/threads`, { title: "Numbers", content_md: "@sam numbers are in" }, 201);
    const grant = await server.call<{ id: string }>("POST", "/api/v1/grants", { principal_id: sam.id, resource_kind: "space", resource_id: finance, role: "member" }, 201);
    await expectStoreEqualsSnapshot(e);
    expect(e.state!.spaces[finance]).toBeDefined();
    expect(e.state!.channels[ledger]).toBeDefined();
    const refreshes = e.stats.structureRefreshes;
    await server.call("DELETE", `/api/v1/grants/${grant.id}`, undefined, 204);
    await expectStoreEqualsSnapshot(e);
    expect(e.state!.spaces[finance]).toBeUndefined();
    expect(e.state!.channels[ledger]).toBeUndefined();
    expect(e.stats.structureRefreshes).toBeGreaterThan(refreshes);
  });

  it("loads a new snapshot when the cursor falls behind the catch-up horizon while it sleeps", async () => {
    await e.stop();
    for (let i = 0; i < CATCHUP_MAX_EVENTS + 5; i++) await post(ticketThread, `while asleep ${i}`);
    e = newEngine("sam.json"); // the same file: the stored cursor
    await e.start();
    await e.until(() => e.status === "live");
    await expectStoreEqualsSnapshot(e);
    expect(e.stats.resyncs).toBe(1);
    expect(e.stats.snapshots).toBe(1);
  });

  it("loads a new snapshot when a restore rotates the epoch", async () => {
    const oldEpoch = e.state!.epoch;
    const file = join(server.dir, "backup.dump");
    await server.admin("backup", "--file", file);
    await post(ticketThread, "lost by the restore");
    await server.stop();
    const restored = await server.admin("restore", "--file", file);
    expect(restored.new_epoch).not.toBe(oldEpoch);
    await server.start();
    await e.until((s) => s?.epoch === restored.new_epoch && e.status === "live", 30000);
    await post(ticketThread, "after the restore");
    await expectStoreEqualsSnapshot(e);
    expect(e.stats.resyncs).toBeGreaterThanOrEqual(1);
    const texts = threadMessages(e.state!, ticketThread).map((m) => m.content_md);
    expect(texts).toContain("after the restore");
    expect(texts).not.toContain("lost by the restore");
    await e.stop();
  });
});
