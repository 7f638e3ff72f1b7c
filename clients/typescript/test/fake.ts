// A scripted fake bothy for the engine's unit tests: listEvents, getSnapshot, listMessages and
// postMessage over an injected fetch, and the gateway over an injected WebSocket, with the
// rules of spec 03 (Check, pages, resume, live events) and faults a test switches on.
import type { Envelope, ResyncBody, Snapshot } from "../src/events.js";
import type { ClientFrame, ServerFrame } from "../src/gen/frames.js";
import type { WebSocketLike } from "../src/engine.js";

export const ME = "00000000-0000-4000-8000-0000000000a1";
export const ALEX = "00000000-0000-4000-8000-0000000000a2";
export const SPACE = "00000000-0000-4000-8000-0000000000b1";
export const CHANNEL = "00000000-0000-4000-8000-0000000000c1";
export const THREAD = "00000000-0000-4000-8000-0000000000d1";
export const EPOCH1 = "00000000-0000-4000-8000-0000000000e1";
export const EPOCH2 = "00000000-0000-4000-8000-0000000000e2";

let ids = 0;
/** A fresh UUID-shaped id. */
export function nextId(): string {
  ids++;
  return `00000000-0000-4000-9000-${ids.toString(16).padStart(12, "0")}`;
}

type Fault = (req: Request) => Response | "network" | undefined;

/** One request the fake answered, for assertions. */
export interface Logged {
  method: string;
  path: string;
  query: string;
  idempotencyKey?: string;
  status: number | "network";
}

export class FakeServer {
  epoch = EPOCH1;
  /** Every event of the log visible to the client, by seq; head may be above the last one. */
  events: Envelope[] = [];
  head = 0;
  oldest = 0;
  catchupMax = 1_000_000;
  pageSize = 500;
  scanWindow = 5000;
  retryAfterMs = 1;
  snapshots = 0;
  log: Logged[] = [];
  /** Faults tried in order on every request; one that answers is removed. */
  faults: Fault[] = [];
  /** When set, sockets close with 1006 right after opening. */
  refuseSockets = false;
  sockets: FakeSocket[] = [];
  /** Resumes answered with error unavailable and close 1013 before one is served. */
  unavailableResumes = 0;
  /** When set, the next resume is answered with this error code and close code. */
  failNextResume?: { code: string; close: number };
  /** When true, sockets send nothing at all (a dead link that never closes). */
  silent = false;
  /** How many events before the cursor a resume replays again (a misbehaving server: duplicates). */
  resumeOverlap = 0;
  messages = new Map<string, { id: string; seq: number; content_md: string }>();
  idempotency = new Map<string, Response>();
  threadSeq = 0;
  /** When true, postMessage drops its answer once after committing (the client sees a network error). */
  dropNextPostAnswer = false;
  /** Runs once, right after the next snapshot is built (writes that race the snapshot). */
  snapshotHook?: () => void;
  /** When set, retention moves oldest_seq up by this much with every page served (up to the head). */
  oldestStepPerPage?: number;
  /** The snapshot's unread_threads. */
  snapshotUnread: Snapshot["unread_threads"] = [];
  /** What listMessages answers for THREAD. */
  threadMessages: unknown[] = [];

  /** Appends an event (seq = head + 1) and sends it to live sockets. */
  append(type: string, payload: Record<string, unknown>, extra: Partial<Envelope> = {}): Envelope {
    this.head++;
    const e = {
      seq: this.head,
      id: nextId(),
      type,
      occurred_at: "2026-12-01T09:30:15.123456Z",
      actor: { id: ALEX, kind: "person", display_name: "Alex", handle: "alex" },
      space_id: SPACE,
      channel_id: CHANNEL,
      thread_id: THREAD,
      resource: { kind: "message", id: nextId() },
      payload,
      ...extra,
    } as Envelope;
    this.events.push(e);
    for (const s of this.sockets) s.live(e);
    return e;
  }

  /** Appends a message.created in THREAD. */
  post(content = "hi", mention = false): Envelope {
    this.threadSeq++;
    const id = nextId();
    this.messages.set(id, { id, seq: this.threadSeq, content_md: content });
    return this.append("message.created", {
      message_id: id,
      thread_id: THREAD,
      channel_id: CHANNEL,
      author_id: ALEX,
      seq: this.threadSeq,
      content_md: content,
      ...(mention ? { mention_ids: [ME] } : {}),
      created_at: "2026-12-01T09:30:15.123456Z",
    });
  }

  /** Moves the head past events the client cannot see. */
  invisible(n: number): void {
    this.head += n;
  }

  snapshot(): Snapshot {
    return {
      head_seq: this.head,
      sync_epoch: this.epoch,
      permission_version: 1,
      is_owner: false,
      principal: { id: ME, kind: "person", display_name: "Sam", handle: "sam" },
      instance: { id: nextId(), name: "bothy", sync_epoch: this.epoch, version: 1 } as Snapshot["instance"],
      spaces: [{ id: SPACE, name: "Support", version: 1, created_at: "2026-12-01T09:30:15Z", level: "member", capabilities: [] }],
      channels: [
        { id: CHANNEL, space_id: SPACE, kind: "standard", name: "tickets", participant_ids: [], version: 1, created_at: "2026-12-01T09:30:15Z", level: "member", capabilities: [] },
      ],
      sidebar: { sections: [], version: 0 },
      unread_threads: this.snapshotUnread,
      active_runs: [],
      agents: [],
      settings: [],
      drafts: [],
      features: [],
    };
  }

  /** The resync body for a cursor, or undefined when it can be served (spec 03, Check). */
  check(after: number, epoch?: string): Record<string, unknown> | undefined {
    let reason: string | undefined;
    if (epoch !== undefined && epoch !== this.epoch) reason = "epoch_changed";
    else if (after > this.head) reason = "cursor_ahead";
    else if (after < this.oldest) reason = "retention";
    else if (this.head - after > this.catchupMax) reason = "too_far_behind";
    if (!reason) return undefined;
    return {
      type: "urn:bothy:problem:resync_required",
      title: "Resync required",
      status: 410,
      code: "resync_required",
      detail: "resync",
      reason,
      recovery: reason === "cursor_ahead" ? "retry" : "snapshot",
      retry_after_ms: this.retryAfterMs,
      head_seq: this.head,
      sync_epoch: this.epoch,
      oldest_seq: this.oldest,
    };
  }

  /** One page from after (spec 03, Page). */
  page(after: number, limit: number): { events: Envelope[]; next_cursor: number } {
    const end = Math.min(this.head, after + this.scanWindow);
    const rows = this.events.filter((e) => e.seq > after && e.seq <= end).slice(0, limit);
    const next = rows.length === limit ? rows[rows.length - 1]!.seq : end;
    return { events: rows, next_cursor: next };
  }

  readonly fetch = async (input: Request | string, init?: RequestInit): Promise<Response> => {
    const req = typeof input === "string" ? new Request(input, init) : input;
    const url = new URL(req.url);
    const entry: Logged = { method: req.method, path: url.pathname, query: url.search, status: 0 };
    const key = req.headers.get("Idempotency-Key");
    if (key) entry.idempotencyKey = key;
    this.log.push(entry);
    for (let i = 0; i < this.faults.length; i++) {
      const r = this.faults[i]!(req);
      if (r !== undefined) {
        this.faults.splice(i, 1);
        entry.status = r === "network" ? "network" : r.status;
        if (r === "network") throw new TypeError("fetch failed");
        return r;
      }
    }
    const r = await this.route(req, url);
    entry.status = r === "network" ? "network" : r.status;
    if (r === "network") throw new TypeError("fetch failed");
    return r;
  };

  private async route(req: Request, url: URL): Promise<Response | "network"> {
    const p = url.pathname;
    if (req.headers.get("Authorization") !== "Bearer good") return problem(401, "unauthenticated");
    if (req.method === "GET" && p === "/api/v1/sync/snapshot") {
      this.snapshots++;
      const body = this.snapshot();
      const hook = this.snapshotHook;
      this.snapshotHook = undefined;
      hook?.();
      return json(200, body);
    }
    if (req.method === "GET" && p === "/api/v1/events") {
      const after = Number(url.searchParams.get("after"));
      const epoch = url.searchParams.get("epoch") ?? undefined;
      const gone = this.check(after, epoch);
      if (gone) return json(410, gone, "application/problem+json");
      const limit = Math.min(Number(url.searchParams.get("limit") ?? this.pageSize) || this.pageSize, this.pageSize);
      const pg = this.page(after, limit);
      if (this.oldestStepPerPage !== undefined) this.oldest = Math.min(this.head, this.oldest + this.oldestStepPerPage);
      return json(200, { ...pg, head_seq: this.head, sync_epoch: this.epoch, oldest_seq: this.oldest });
    }
    const m = p.match(/^\/api\/v1\/threads\/([^/]+)\/messages$/);
    if (m && req.method === "GET") {
      const after = Number(url.searchParams.get("after") ?? 0);
      return json(200, { items: (this.threadMessages as { seq: number }[]).filter((x) => x.seq > after) });
    }
    if (m && req.method === "POST") {
      const key = req.headers.get("Idempotency-Key");
      if (key && this.idempotency.has(key)) return this.idempotency.get(key)!.clone();
      const body = (await req.json()) as { content_md: string };
      const e = this.post(body.content_md);
      const pl = e.payload as unknown as { message_id: string; seq: number };
      const res = json(201, {
        id: pl.message_id, thread_id: THREAD, channel_id: CHANNEL, space_id: SPACE, seq: pl.seq, author_id: ME,
        content_md: body.content_md, mention_ids: [], created_at: "2026-12-01T09:30:15.123456Z", redacted: false,
      });
      if (key) this.idempotency.set(key, res.clone());
      if (this.dropNextPostAnswer) {
        this.dropNextPostAnswer = false;
        return "network";
      }
      return res;
    }
    return problem(404, "not_found");
  }

  /** The WebSocket constructor the engine is given. */
  get WebSocket(): new (url: string) => WebSocketLike {
    const server = this;
    return class extends FakeSocket {
      constructor(url: string) {
        super(server, url);
      }
    };
  }

  /** Closes every open socket with code (1006: dropped). */
  killSockets(code = 1006): void {
    for (const s of [...this.sockets]) s.serverClose(code);
  }
}

export class FakeSocket implements WebSocketLike {
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  private authed = false;
  private cursor = -1;
  private closed = false;
  /** Frames the client sent. */
  sent: Record<string, unknown>[] = [];

  constructor(private readonly server: FakeServer, readonly url: string) {
    setTimeout(() => {
      if (server.refuseSockets) return this.serverClose(1006);
      server.sockets.push(this);
      this.onopen?.({});
    }, 0);
  }

  send(data: string): void {
    const f = JSON.parse(data) as ClientFrame;
    this.sent.push(f);
    if (f.op === "auth") {
      if (f.token !== "good") {
        this.frame({ op: "error", code: "unauthenticated", detail: "The token was not accepted." });
        return this.serverClose(4001);
      }
      this.authed = true;
      return;
    }
    if (f.op === "resume" && f.after !== undefined && this.authed) {
      if (this.server.silent) return;
      if (this.server.unavailableResumes > 0) {
        this.server.unavailableResumes--;
        this.frame({ op: "error", code: "unavailable", detail: "The database is unavailable.", retry_after_ms: 5 });
        return this.serverClose(1013);
      }
      const fail = this.server.failNextResume;
      if (fail) {
        this.server.failNextResume = undefined;
        this.frame({ op: "error", code: fail.code, detail: "The fake refused this resume." });
        return this.serverClose(fail.close);
      }
      const gone = this.server.check(f.after, f.epoch);
      if (gone) {
        const { reason, recovery, retry_after_ms, head_seq, sync_epoch, oldest_seq } = gone as ResyncBody;
        this.frame({ op: "resync_required", reason, recovery, retry_after_ms, head_seq, sync_epoch, oldest_seq });
        return this.serverClose(4004);
      }
      const from = Math.max(0, f.after - this.server.resumeOverlap);
      for (const e of this.server.events) if (e.seq > from) this.frame({ op: "event", event: e });
      this.cursor = this.server.head;
      this.frame({ op: "catchup.complete", cursor: this.server.head });
    }
  }

  close(code = 1000, reason = ""): void {
    this.serverClose(code, reason);
  }

  /** A live event from the server. */
  live(e: Envelope): void {
    if (this.cursor < 0 || this.closed || this.server.silent) return;
    this.cursor = e.seq;
    this.frame({ op: "event", event: e });
  }

  serverClose(code: number, reason = ""): void {
    if (this.closed) return;
    this.closed = true;
    this.server.sockets = this.server.sockets.filter((s) => s !== this);
    setTimeout(() => this.onclose?.({ code, reason }), 0);
  }

  private frame(f: ServerFrame): void {
    const data = JSON.stringify(f);
    setTimeout(() => this.onmessage?.({ data }), 0);
  }
}

function json(status: number, body: unknown, type = "application/json"): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": type } });
}

/** A problem answer; retryAfterS sets Retry-After. */
export function problem(status: number, code: string, retryAfterS?: number): Response {
  const headers: Record<string, string> = { "Content-Type": "application/problem+json" };
  if (retryAfterS !== undefined) headers["Retry-After"] = String(retryAfterS);
  return new Response(JSON.stringify({ type: `urn:bothy:problem:${code}`, title: code, status, code, detail: code }), { status, headers });
}
