// Starts a real `bothy serve` (the binary BOTHY_BIN, which make sdk-test builds) on its own
// embedded PostgreSQL in a temporary directory, and drives its admin commands.
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * The address in bothy's "serving http" log line (JSON, on stderr, at level info), or undefined
 * while it has not logged one. Reading it back is how a server bound to port 0 says where it
 * listens: no port is picked, closed and handed over (another process could take it in between).
 */
export function servingAddr(log: string): string | undefined {
  for (const line of log.split("\n")) {
    if (!line.includes('"serving http"')) continue;
    try {
      const rec = JSON.parse(line) as { msg?: string; addr?: string };
      if (rec.msg === "serving http" && rec.addr) return rec.addr;
    } catch {
      // a line cut short: the rest of it comes with the next chunk
    }
  }
  return undefined;
}

export class BothyServer {
  readonly dir: string;
  baseUrl = "";
  ownerToken = "";
  ownerId = "";
  private proc?: ChildProcess;
  private port = 0;
  private log = "";

  constructor(
    readonly bin: string,
    /** Extra configuration keys, as BOTHY_ environment variables. */
    private readonly env: Record<string, string> = {},
  ) {
    this.dir = mkdtempSync(join(tmpdir(), "bothy-sdk-it-"));
    chmodSync(this.dir, 0o755); // PostgreSQL runs as an unprivileged account when we are root
  }

  private environ(): NodeJS.ProcessEnv {
    // Every BOTHY_ variable is a configuration key to bothy, so none is inherited (BOTHY_BIN is ours).
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("BOTHY_")));
    return {
      ...inherited,
      BOTHY_EMBEDDED_DIR: join(this.dir, "db"),
      // Port 0 at the first start (the kernel picks one; bothy logs it); a restart binds the port
      // this server had, which the engine's baseUrl names.
      BOTHY_HTTP_ADDR: `127.0.0.1:${this.port}`,
      BOTHY_LOG_LEVEL: "info", // "serving http" is logged at info
      ...this.env,
    };
  }

  /** Starts serve (the first start creates the owner Alex) and waits until /readyz answers 200. */
  async start(): Promise<void> {
    const first = !this.ownerToken;
    const args = ["serve", ...(first ? ["--bootstrap-owner"] : [])];
    const p = spawn(this.bin, args, { env: this.environ(), stdio: ["ignore", "pipe", "pipe"] });
    this.proc = p;
    let out = "";
    p.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    const logFrom = this.log.length; // a restart's line, not the last run's
    p.stderr!.on("data", (d: Buffer) => (this.log += d.toString()));
    const deadline = Date.now() + 90_000;
    for (;;) {
      if (p.exitCode !== null) throw new Error(`bothy serve exited ${p.exitCode}:\n${this.log}`);
      if (Date.now() > deadline) throw new Error(`bothy serve did not become ready:\n${this.log}`);
      if (first && !this.ownerToken) {
        const t = out.match(/(bothy_[A-Za-z0-9_-]{20,})/);
        const id = out.match(/principal ([0-9a-f-]{36})/);
        if (t && id) {
          this.ownerToken = t[1]!;
          this.ownerId = id[1]!;
        }
      }
      const addr = servingAddr(this.log.slice(logFrom));
      if (addr && !this.port) this.port = Number(addr.slice(addr.lastIndexOf(":") + 1));
      if (addr) this.baseUrl = `http://${addr}`;
      if (addr && (!first || this.ownerToken)) {
        try {
          const r = await fetch(`${this.baseUrl}/readyz`);
          if (r.status === 200) return;
        } catch {
          // not listening yet
        }
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops serve with SIGTERM and waits for it (its embedded PostgreSQL stops with it). */
  async stop(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once("exit", r));
    p.kill("SIGTERM");
    await exited;
    this.proc = undefined;
  }

  /** Runs `bothy admin ...` on the same database; returns its JSON output. */
  async admin(...args: string[]): Promise<Record<string, unknown>> {
    const { stdout } = await run(this.bin, ["admin", ...args], { env: this.environ(), timeout: 120_000 });
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  /** Stops the server and deletes its directory. */
  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** A REST call as the owner (or another token); throws on a status other than want. */
  async call<T = Record<string, unknown>>(method: string, path: string, body?: unknown, want?: number, token = this.ownerToken): Promise<T> {
    const r = await fetch(this.baseUrl + path, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body !== undefined ? { "Content-Type": "application/json" } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await r.text();
    if ((want !== undefined && r.status !== want) || (want === undefined && !r.ok)) {
      throw new Error(`${method} ${path}: ${r.status} ${text}`);
    }
    return (text ? JSON.parse(text) : {}) as T;
  }
}
