// Starts a real `bothy serve` (the binary BOTHY_BIN, which make web-test builds) on its own
// embedded PostgreSQL in a temporary directory, serving the web client's build (web.dir).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// The SDK's harness reads the address bothy logs; one reader for both harnesses.
import { servingAddr } from "../../../clients/typescript/test/integration/server.js";

export class BothyServer {
  readonly dir: string;
  baseUrl = "";
  ownerToken = "";
  /** The owner's (Alex's) principal id. */
  ownerId = "";
  private proc?: ChildProcess;
  private log = "";

  constructor(
    readonly bin: string,
    private readonly env: Record<string, string> = {},
  ) {
    this.dir = mkdtempSync(join(tmpdir(), "bothy-web-test-"));
    // When the tests run as root, PostgreSQL runs as the unprivileged postgres user, which must
    // reach its data directory below this one.
    chmodSync(this.dir, 0o711);
  }

  /**
   * Starts serve on port 0 (creating the owner Alex), reads the address it logs and waits until
   * /readyz answers 200.
   */
  async start(): Promise<void> {
    // Every BOTHY_ variable is a configuration key to bothy, so none is inherited (BOTHY_BIN is ours).
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("BOTHY_")));
    const env = { ...inherited, BOTHY_EMBEDDED_DIR: join(this.dir, "db"), BOTHY_HTTP_ADDR: "127.0.0.1:0", BOTHY_LOG_LEVEL: "info", ...this.env };
    const p = spawn(this.bin, ["serve", "--bootstrap-owner"], { env, stdio: ["ignore", "pipe", "pipe"] });
    this.proc = p;
    let out = "";
    p.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    p.stderr!.on("data", (d: Buffer) => (this.log += d.toString()));
    const deadline = Date.now() + 90_000;
    for (;;) {
      if (p.exitCode !== null) throw new Error(`bothy serve exited ${p.exitCode}:\n${this.log}`);
      if (Date.now() > deadline) throw new Error(`bothy serve did not become ready:\n${this.log}`);
      const t = out.match(/(bothy_[A-Za-z0-9_-]{20,})/);
      const addr = servingAddr(this.log);
      if (t && addr) {
        this.baseUrl = `http://${addr}`;
        this.ownerToken = t[1]!;
        try {
          if ((await fetch(`${this.baseUrl}/readyz`)).status === 200) {
            this.ownerId = (await this.call<{ id: string }>("GET", "/api/v1/me")).id;
            return;
          }
        } catch {
          // not listening yet
        }
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops serve and deletes its directory. */
  async destroy(): Promise<void> {
    const p = this.proc;
    if (p && p.exitCode === null) {
      const exited = new Promise((r) => p.once("exit", r));
      p.kill("SIGTERM");
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** A REST call (as the owner unless a token is given); throws on a status other than want. */
  async call<T = Record<string, unknown>>(method: string, path: string, body?: unknown, want?: number, token = this.ownerToken): Promise<T> {
    const r = await fetch(this.baseUrl + path, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body !== undefined ? { "Content-Type": "application/json" } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await r.text();
    if ((want !== undefined && r.status !== want) || (want === undefined && !r.ok)) throw new Error(`${method} ${path}: ${r.status} ${text}`);
    return (text ? JSON.parse(text) : {}) as T;
  }

  /** A new person with a token. */
  async person(display_name: string, handle: string): Promise<{ id: string; token: string }> {
    const p = await this.call<{ id: string }>("POST", "/api/v1/people", { display_name, handle, email: `${handle}@example.com` }, 201);
    const t = await this.call<{ token: string }>("POST", `/api/v1/principals/${p.id}/tokens`, {}, 201);
    return { id: p.id, token: t.token };
  }
}
