// The engine's writes other than posts and read marks, as the web client makes them: each one's
// request (method, path, query, body), its answer, and one Idempotency-Key across its retries.
import { describe, expect, it } from "vitest";
import { SyncEngine } from "../src/engine.js";

const CH = "00000000-0000-4000-8000-0000000000c1";
const TH = "00000000-0000-4000-8000-0000000000a1";
const MSG = "00000000-0000-4000-8000-0000000000e1";

interface Seen {
  method: string;
  path: string;
  query: string;
  body: unknown;
  key: string | null;
}

/** An engine whose fetch records every request and answers 503 to the first `failFirst` of them. */
function recorder(status: number, answer: unknown, failFirst = 0): { e: SyncEngine; seen: Seen[] } {
  const seen: Seen[] = [];
  const fetch = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    const text = await req.text();
    seen.push({ method: req.method, path: url.pathname, query: url.search, body: text ? JSON.parse(text) : undefined, key: req.headers.get("Idempotency-Key") });
    if (seen.length <= failFirst) {
      return new Response(JSON.stringify({ code: "unavailable", title: "Unavailable", status: 503 }), { status: 503, headers: { "Content-Type": "application/problem+json" } });
    }
    return answer === undefined ? new Response(null, { status }) : new Response(JSON.stringify(answer), { status, headers: { "Content-Type": "application/json" } });
  };
  const e = new SyncEngine({
    baseUrl: "http://fake.example.com",
    token: "good",
    fetch: fetch as typeof globalThis.fetch,
    WebSocket: null,
    writeRetry: { attempts: 3, baseMs: 1, maxMs: 2 },
  });
  return { e, seen };
}

const thread = { id: TH, channel_id: CH, title: "Printer" };
const message = { id: MSG, thread_id: TH, channel_id: CH, content_md: "Fixed" };

describe("the engine's writes", () => {
  it.each([
    { name: "createThread with a title", status: 201, answer: thread, run: (e: SyncEngine) => e.createThread(CH, "The printer is jammed", "Printer"), method: "POST", path: `/api/v1/channels/${CH}/threads`, query: "", body: { content_md: "The printer is jammed", title: "Printer" }, keyed: true },
    { name: "createThread without a title", status: 201, answer: thread, run: (e: SyncEngine) => e.createThread(CH, "The printer is jammed"), method: "POST", path: `/api/v1/channels/${CH}/threads`, query: "", body: { content_md: "The printer is jammed" }, keyed: true },
    { name: "editMessage", status: 200, answer: message, run: (e: SyncEngine) => e.editMessage(MSG, "Fixed"), method: "PATCH", path: `/api/v1/messages/${MSG}`, query: "", body: { content_md: "Fixed" }, keyed: false },
    { name: "deleteMessage", status: 204, answer: undefined, run: (e: SyncEngine) => e.deleteMessage(MSG), method: "DELETE", path: `/api/v1/messages/${MSG}`, query: "", body: undefined, keyed: false },
    { name: "addReaction", status: 200, answer: {}, run: (e: SyncEngine) => e.addReaction(MSG, "👍"), method: "PUT", path: `/api/v1/messages/${MSG}/reactions/${encodeURIComponent("👍")}`, query: "", body: undefined, keyed: false },
    { name: "removeReaction", status: 204, answer: undefined, run: (e: SyncEngine) => e.removeReaction(MSG, "👍"), method: "DELETE", path: `/api/v1/messages/${MSG}/reactions/${encodeURIComponent("👍")}`, query: "", body: undefined, keyed: false },
    { name: "saveDraft of a thread", status: 200, answer: {}, run: (e: SyncEngine) => e.saveDraft(CH, "Half a reply", TH), method: "PUT", path: `/api/v1/channels/${CH}/draft`, query: "", body: { content_md: "Half a reply", thread_id: TH }, keyed: false },
    { name: "saveDraft of a channel", status: 200, answer: {}, run: (e: SyncEngine) => e.saveDraft(CH, "Half a post"), method: "PUT", path: `/api/v1/channels/${CH}/draft`, query: "", body: { content_md: "Half a post" }, keyed: false },
    { name: "deleteDraft of a thread", status: 204, answer: undefined, run: (e: SyncEngine) => e.deleteDraft(CH, TH), method: "DELETE", path: `/api/v1/channels/${CH}/draft`, query: `?thread_id=${TH}`, body: undefined, keyed: false },
    { name: "deleteDraft of a channel", status: 204, answer: undefined, run: (e: SyncEngine) => e.deleteDraft(CH), method: "DELETE", path: `/api/v1/channels/${CH}/draft`, query: "", body: undefined, keyed: false },
  ])("$name: one request, retried through a 503 under the same key", async ({ status, answer, run, method, path, query, body, keyed }) => {
    const { e, seen } = recorder(status, answer, 1);
    const got = await run(e);
    if (answer !== undefined && status !== 204 && (method === "POST" || method === "PATCH")) expect(got).toEqual(answer);
    expect(seen).toHaveLength(2);
    for (const s of seen) expect({ method: s.method, path: s.path, query: s.query, body: s.body }).toEqual({ method, path, query, body });
    if (keyed) {
      expect(seen[0]!.key).toBeTruthy();
      expect(seen[1]!.key).toBe(seen[0]!.key);
    }
  });

  it("throws a 4xx at once, without a retry", async () => {
    const seen: string[] = [];
    const e = new SyncEngine({
      baseUrl: "http://fake.example.com",
      token: "good",
      WebSocket: null,
      fetch: (async (req: Request) => {
        seen.push(req.method);
        return new Response(JSON.stringify({ code: "forbidden", title: "Forbidden", status: 403 }), { status: 403, headers: { "Content-Type": "application/problem+json" } });
      }) as typeof globalThis.fetch,
    });
    await expect(e.editMessage(MSG, "x")).rejects.toThrow(/403/);
    expect(seen).toEqual(["PATCH"]);
  });
});
