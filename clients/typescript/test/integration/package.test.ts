// The SDK as someone outside the repository gets it: `npm pack` (which builds dist/ with its
// .d.ts files), the tarball installed into an empty ESM project with a plain `npm install`, and
// the README's example, taken from the README as written, run by plain `node` against a real
// bothy serve. It must print a message posted after it started.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { BothyServer } from "./server.js";

const run = promisify(execFile);
const bin = process.env.BOTHY_BIN;
if (!bin) throw new Error("BOTHY_BIN names the bothy binary to test against (make sdk-test builds it)");
const sdkDir = fileURLToPath(new URL("../../", import.meta.url));

/** The README's first JavaScript block (the one under "Use"), exactly as the README shows it. */
export function readmeExample(readme: string): string {
  const m = readme.match(/```js\n([\s\S]*?)```/);
  if (!m) throw new Error("the README has no ```js block");
  return m[1]!;
}

/** The README's install line for a fresh project: the packages it names after `npm install`. */
export function readmeInstall(readme: string): string[] {
  const m = readme.match(/^npm install (.+)$/m);
  if (!m) throw new Error("the README names no npm install line");
  return m[1]!.trim().split(/\s+/);
}

let server: BothyServer;
let dir: string;
let example: ChildProcess | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "bothy-sdk-pack-"));
  server = new BothyServer(bin);
  await server.start();
  const packDir = join(dir, "pack");
  mkdirSync(packDir);
  await run("npm", ["pack", "--pack-destination", packDir], { cwd: sdkDir, timeout: 120_000 });
  const tarball = join(packDir, readdirSync(packDir).find((f) => f.endsWith(".tgz"))!);
  const project = join(dir, "project");
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "fresh", private: true, type: "module" }));
  // The README's install line, with the tarball standing for the package's name.
  const readme = readFileSync(join(sdkDir, "README.md"), "utf8");
  const pkgs = readmeInstall(readme).map((p) => (p === "@bothy/client" ? tarball : p));
  await run("npm", ["install", "--no-audit", "--no-fund", ...pkgs], { cwd: project, timeout: 120_000 });
  writeFileSync(join(project, "live.js"), readmeExample(readme));
}, 240_000);

afterAll(async () => {
  if (example && example.exitCode === null) {
    const exited = new Promise((r) => example!.once("exit", r));
    example.kill("SIGTERM");
    await exited;
  }
  await server?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the packed SDK in a fresh ESM project", { timeout: 90_000 }, () => {
  it("installs with its dependencies and runs the README's example as written", async () => {
    const space = (await server.call<{ id: string }>("POST", "/api/v1/spaces", { name: "Support" }, 201)).id;
    const channel = (await server.call<{ id: string }>("POST", `/api/v1/spaces/${space}/channels`, { name: "tickets" }, 201)).id;
    const thread = (await server.call<{ id: string }>("POST", `/api/v1/channels/${channel}/threads`, { title: "Printer", content_md: "The printer is jammed" }, 201)).id;

    let out = "";
    let err = "";
    example = spawn("node", ["live.js"], {
      cwd: join(dir, "project"),
      env: { ...process.env, BASE_URL: server.baseUrl, TOKEN: server.ownerToken },
      stdio: ["ignore", "pipe", "pipe"],
    });
    example.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    example.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    const waitFor = async (what: string) => {
      const deadline = Date.now() + 60_000;
      while (!out.includes(what)) {
        if (example!.exitCode !== null) throw new Error(`the example exited ${example!.exitCode}:\n${out}\n${err}`);
        if (Date.now() > deadline) throw new Error(`the example never printed ${JSON.stringify(what)}:\n${out}\n${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    await waitFor("synced");
    await server.call("POST", `/api/v1/threads/${thread}/messages`, { content_md: "Fixed it" }, 201);
    await waitFor("Fixed it");
    expect(out).toMatch(/^Alex: Fixed it$/m);
  });
});
