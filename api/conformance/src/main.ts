// make api-conformance: start a real bothy (its embedded PostgreSQL in a scratch directory),
// put Prism's validating proxy in front of it, run the scenario through the generated client
// and fail on any response Prism finds in breach of api/openapi.yaml, on any operation of the
// document the scenario did not call, and on any event type it did not see.
//
// Usage: node dist/src/main.js <bothy binary> <api/openapi.yaml>

import { spawn, execFile, type ChildProcess } from "node:child_process";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Record } from "./check.js";
import { summary } from "./events.js";
import { run } from "./scenario.js";

const [bothy, openapi] = process.argv.slice(2);
if (bothy === undefined || openapi === undefined) {
  console.error("usage: main.js <bothy binary> <api/openapi.yaml>");
  process.exit(2);
}

/** output keeps everything a child printed, so a later wait sees lines printed before it. */
const output = new WeakMap<ChildProcess, { text: string }>();

/** collect starts keeping a child's output. */
function collect(child: ChildProcess): ChildProcess {
  const buf = { text: "" };
  output.set(child, buf);
  child.stdout?.on("data", (chunk: Buffer) => (buf.text += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (buf.text += chunk.toString()));
  return child;
}

/** waitFor resolves with the first match of re in the child's output, or rejects on exit or timeout. */
async function waitFor(child: ChildProcess, re: RegExp, name: string, timeoutMs: number): Promise<RegExpMatchArray> {
  const buf = output.get(child) ?? { text: "" };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = buf.text.match(re);
    if (m !== null) {
      return m;
    }
    if (child.exitCode !== null) {
      throw new Error(`${name} exited with ${child.exitCode} before ${re}; output:\n${buf.text}`);
    }
    if (Date.now() > deadline) {
      throw new Error(`${name}: no ${re} within ${timeoutMs} ms; output:\n${buf.text}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** stop ends a child and waits for it. */
async function stop(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null) {
    return;
  }
  const done = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  await done;
  clearTimeout(timer);
}

/** documentOperations lists the operationIds of the document. */
async function documentOperations(path: string): Promise<string[]> {
  const text = await readFile(path, "utf8");
  return [...text.matchAll(/^\s+operationId:\s*(\S+)\s*$/gm)].map((m) => m[1] ?? "");
}

/** eventTypes lists the event types of the document: the keys of Event's discriminator mapping. */
async function eventTypes(path: string): Promise<string[]> {
  const text = await readFile(path, "utf8");
  return [...text.matchAll(/^\s+([a-z_]+\.[a-z_]+):\s*"#\/components\/schemas\/\w+Event"\s*$/gm)].map((m) => m[1] ?? "");
}

async function main(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), "bothy-conformance-"));
  // Run as root, the embedded PostgreSQL runs as the postgres user, who must reach the data.
  await chmod(dir, 0o711);
  // bothy and Prism bind port 0 and print the address the kernel gave them: no port is picked,
  // closed and handed over, which another process could take in between.
  const env = { ...process.env, BOTHY_EMBEDDED_DIR: join(dir, "data"), BOTHY_HTTP_ADDR: "127.0.0.1:0" };
  let server: ChildProcess | undefined;
  let prism: ChildProcess | undefined;
  try {
    server = collect(spawn(bothy as string, ["serve", "--bootstrap-owner", "--owner-name", "Alex", "--owner-handle", "alex", "--owner-email", "alex@example.com"], { env, stdio: ["ignore", "pipe", "pipe"] }));
    const token = (await waitFor(server, /^\s+(bothy_\S+)\s*$/m, "bothy serve", 120_000))[1] ?? "";
    const apiAddr = (await waitFor(server, /"msg":"serving http"[^\n]*"addr":"([^"]+)"/, "bothy serve", 60_000))[1] ?? "";
    // A flag defined by the operator: its flags.updated event has the system actor.
    await promisify(execFile)(bothy as string, ["admin", "flags", "define", "--key", "threads.summaries", "--description", "Summaries of long threads.", "--default", "false"], { env });

    prism = collect(spawn(join("node_modules", ".bin", "prism"), ["proxy", openapi as string, `http://${apiAddr}`, "--host", "127.0.0.1", "--port", "0", "--errors"], { stdio: ["ignore", "pipe", "pipe"] }));
    const prismBase = (await waitFor(prism, /Prism is listening on (http:\/\/[\d.]+:\d+)/, "prism", 120_000))[1] ?? "";

    const record = new Record();
    let failure: unknown;
    let events: Awaited<ReturnType<typeof run>> = [];
    try {
      events = await run({ base: prismBase, ownerToken: token }, record);
    } catch (err) {
      failure = err;
    }

    const ops = await documentOperations(openapi as string);
    const missed = ops.filter((op) => !record.exercised.has(op));
    const responses = [...record.exercised.values()].reduce((n, s) => n + s.size, 0);
    const types = new Set(events.map((e) => e.type));
    // Every event read through its typed payload (events.ts), no cast.
    const summaries = events.map(summary);
    const registered = await eventTypes(openapi as string);
    const unseen = registered.filter((t) => !types.has(t as (typeof events)[number]["type"]));
    console.log(`api-conformance: ${record.exercised.size} of ${ops.length} operations called (${responses} operation-status pairs), ${summaries.length} events of ${types.size} of ${registered.length} types read through their typed payloads, ${record.findings.length} findings`);
    if (unseen.length > 0) {
      console.log(`  event types no operation of the scenario causes: ${unseen.join(", ")}`);
    }
    for (const f of record.findings) {
      console.log(`  [${f.step}] ${f.method} ${f.url} -> ${f.status}: ${f.detail}`);
    }
    if (missed.length > 0) {
      console.log(`  operations the scenario does not call: ${missed.join(", ")}`);
    }
    if (failure !== undefined) {
      console.log(`  the scenario stopped: ${failure instanceof Error ? failure.message : String(failure)}`);
    }
    return failure === undefined && record.findings.length === 0 && missed.length === 0 ? 0 : 1;
  } finally {
    await stop(prism);
    await stop(server);
    await rm(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
