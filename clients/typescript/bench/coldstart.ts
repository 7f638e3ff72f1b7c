// The SDK's cold start, timed for `make bench` (services/server/cmd/bothybench, the sdk case):
// a new SyncEngine with an empty store loads the snapshot, names the snapshot's mentions and
// catches up to the head (REST only, so the time ends when the store reached the head), beside
// a bare fetch loop that makes the very requests the SDK made (recorded from its first run),
// each answer read and parsed as JSON, the message lists as many at a time as the SDK sends
// them and everything else one after another. After one unmeasured run of each, the rounds
// run both, the bare loop first in even rounds and the SDK first in odd ones, so a drift of the
// machine's speed within a round falls on both sides alike. It prints one JSON line (the result)
// on stdout.
//
// Environment: BENCH_BASE_URL (the server), BENCH_TOKEN (Sam's token), BENCH_ROUNDS.
import { performance } from "node:perf_hooks";
import { SyncEngine } from "../src/index.js";

interface Recorded {
  method: string;
  url: string;
  headers: [string, string][];
}

interface ColdStart {
  ms: number;
  cursor: number;
  head: number;
  channels: number;
  threads: number;
  mentions: number;
}

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`coldstart: ${name} is not set`);
  return v;
}

const baseUrl = env("BENCH_BASE_URL");
const token = env("BENCH_TOKEN");
const rounds = Number(env("BENCH_ROUNDS"));
if (!Number.isInteger(rounds) || rounds < 1) throw new Error("coldstart: BENCH_ROUNDS must be a positive integer");

/** One cold start of the SDK: a new engine, an empty store, until it is live at the head. */
async function sdkColdStart(record?: Recorded[]): Promise<ColdStart> {
  const f: typeof fetch = (input, init) => {
    if (record) {
      const req = new Request(input, init);
      const headers: [string, string][] = [];
      req.headers.forEach((value, name) => headers.push([name, value]));
      record.push({ method: req.method, url: req.url, headers });
    }
    return fetch(input, init);
  };
  const began = performance.now();
  // WebSocket null: REST catch-up only, so "live" means the store reached the head over REST
  // and no socket adds its connect to the time.
  const engine = new SyncEngine({ baseUrl, token, fetch: f, WebSocket: null, pollMs: 3_600_000 });
  await engine.start();
  await engine.until(() => engine.status === "live" || engine.status === "failed", 600_000);
  const ms = performance.now() - began;
  await engine.stop();
  if (engine.lastError && engine.status !== "stopped") throw engine.lastError;
  const st = engine.state;
  if (!st) throw new Error("coldstart: the engine holds no state");
  let mentions = 0;
  for (const t of Object.values(st.threads)) mentions += Object.keys(t.mentions).length;
  return {
    ms,
    cursor: st.cursor,
    head: st.head_seq,
    channels: Object.keys(st.channels).length,
    threads: Object.keys(st.threads).length,
    mentions,
  };
}

/** How many message lists the SDK reads at once when it names a snapshot's mentions (its default). */
const hydrateConcurrency = 6;

/** One recorded request, its answer read and parsed as JSON. */
async function replay(r: Recorded): Promise<void> {
  const res = await fetch(r.url, { method: r.method, headers: r.headers });
  if (res.status !== 200) throw new Error(`coldstart: bare ${r.method} ${r.url}: ${res.status} ${await res.text()}`);
  await res.json();
}

/**
 * The bare loop: the recorded requests in their order, each answer parsed as JSON; a run of
 * message lists (the naming of the snapshot's mentions) goes out as many at a time as the SDK
 * sends them, everything else one after another, as the SDK does.
 */
async function bareLoop(reqs: Recorded[]): Promise<number> {
  const began = performance.now();
  for (let i = 0; i < reqs.length; ) {
    if (!reqs[i]!.url.includes("/messages")) {
      await replay(reqs[i++]!);
      continue;
    }
    let j = i;
    while (j < reqs.length && reqs[j]!.url.includes("/messages")) j++;
    const queue = reqs.slice(i, j);
    const worker = async () => {
      for (let r = queue.shift(); r !== undefined; r = queue.shift()) await replay(r);
    };
    await Promise.all(Array.from({ length: Math.min(hydrateConcurrency, queue.length) }, worker));
    i = j;
  }
  return performance.now() - began;
}

const recorded: Recorded[] = [];
const first = await sdkColdStart(recorded);
await bareLoop(recorded);
const sdk: number[] = [];
const bare: number[] = [];
let last = first;
const sdkRun = async () => {
  last = await sdkColdStart();
  sdk.push(last.ms);
};
for (let i = 0; i < rounds; i++) {
  if (i % 2 === 0) {
    bare.push(await bareLoop(recorded));
    await sdkRun();
  } else {
    await sdkRun();
    bare.push(await bareLoop(recorded));
  }
}
const kinds: Record<string, number> = {};
for (const r of recorded) {
  const path = new URL(r.url).pathname.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, "{id}");
  kinds[`${r.method} ${path}`] = (kinds[`${r.method} ${path}`] ?? 0) + 1;
}
process.stdout.write(
  JSON.stringify({
    requests: recorded.length,
    request_kinds: kinds,
    sdk_ms: sdk,
    bare_ms: bare,
    cursor: last.cursor,
    head_seq: last.head,
    channels: last.channels,
    threads: last.threads,
    mentions: last.mentions,
  }) + "\n",
);
