// The web client's first render of the sidebar, timed for `make bench`
// (services/server/cmd/bothybench, the sidebar case), in headless Chromium (Debian's, through
// playwright-core, the flags of test/browser.test.ts).
//
// Figure: a fresh browser context (no stored state) opens the web client served by bothy with
// the token in localStorage (as a reload after signing in finds it), so the app signs in, the
// SDK starts from a snapshot and the app renders; the time is from the navigation's start to
// the frame after the one that painted the sidebar with BENCH_CHANNELS channel links.
// Baseline: a static page of the same DOM (the app's rendered document with its scripts
// removed, its stylesheets kept), served from memory by a plain HTTP server of this script,
// timed the same way in a fresh context. After one unmeasured load of each, the rounds load
// both, the baseline first in even rounds and the figure first in odd ones. It prints one JSON
// line (the result) on stdout.
//
// Environment: BENCH_BASE_URL (the server), BENCH_TOKEN (the person's token), BENCH_CHANNELS
// (how many channel links the sidebar must show), BENCH_ROUNDS, CHROMIUM (the browser).
import { createServer } from "node:http";
import { chromium } from "playwright-core";

function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(`sidebar: ${name} is not set`);
  return v;
}

const baseUrl = env("BENCH_BASE_URL");
const token = env("BENCH_TOKEN");
const channels = Number(env("BENCH_CHANNELS"));
const rounds = Number(env("BENCH_ROUNDS"));
const executablePath = env("CHROMIUM");
if (!Number.isInteger(channels) || channels < 1 || !Number.isInteger(rounds) || rounds < 1) {
  throw new Error("sidebar: BENCH_CHANNELS and BENCH_ROUNDS must be positive integers");
}
/** The channel links of the sidebar (each channel one list item with one link). */
const selector = "nav.sidebar li > a";

// Runs in every page before its own scripts: checks at every animation frame whether the
// sidebar holds the channels (one query a frame, whatever the page does meanwhile), and once it
// does, records the time at the next frame, after the one that painted them.
const probe = `(() => {
  const want = ${channels};
  const tick = () => {
    if (document.querySelectorAll(${JSON.stringify(selector)}).length >= want) {
      requestAnimationFrame(() => { window.__sidebarPainted = performance.now(); });
    } else {
      requestAnimationFrame(tick);
    }
  };
  requestAnimationFrame(tick);
})();`;

const browser = await chromium.launch({
  executablePath,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

/** One load of url in a fresh context; returns the milliseconds to the painted sidebar. */
async function load(url, withToken, keep) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    if (withToken) await context.addInitScript(`localStorage.setItem("bothy.token", ${JSON.stringify(token)});`);
    await context.addInitScript(probe);
    const page = await context.newPage();
    await page.goto(url);
    await page.waitForFunction(() => window.__sidebarPainted !== undefined, undefined, { polling: 100, timeout: 600_000 });
    const ms = await page.evaluate(() => window.__sidebarPainted);
    const links = await page.locator(selector).count();
    if (links !== channels) throw new Error(`sidebar: ${url} shows ${links} channel links, want ${channels}`);
    if (keep) await keep(page);
    return ms;
  } finally {
    await context.close();
  }
}

// The static page: the app's document once rendered, its scripts removed.
let html = "";
await load(baseUrl + "/", true, async (page) => {
  html = await page.evaluate(() => {
    const doc = document.documentElement.cloneNode(true);
    for (const s of doc.querySelectorAll("script, link[rel=modulepreload]")) s.remove();
    return "<!doctype html>\n" + doc.outerHTML;
  });
});
const assets = new Map();
for (const m of html.matchAll(/<link[^>]+href="([^"]+\.css)"/g)) {
  const res = await fetch(new URL(m[1], baseUrl));
  if (res.status !== 200) throw new Error(`sidebar: stylesheet ${m[1]}: ${res.status}`);
  assets.set(new URL(m[1], baseUrl).pathname, await res.text());
}
if (assets.size === 0) throw new Error("sidebar: the web client's page links no stylesheet");
const server = createServer((req, res) => {
  const css = assets.get(req.url ?? "");
  if (css !== undefined) {
    res.writeHead(200, { "Content-Type": "text/css; charset=utf-8" });
    res.end(css);
  } else if (req.url === "/") {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(html);
  } else {
    res.writeHead(404);
    res.end();
  }
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const staticUrl = `http://127.0.0.1:${server.address().port}/`;

try {
  await load(staticUrl, false);
  const app = [];
  const bare = [];
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      bare.push(await load(staticUrl, false));
      app.push(await load(baseUrl + "/", true));
    } else {
      app.push(await load(baseUrl + "/", true));
      bare.push(await load(staticUrl, false));
    }
  }
  process.stdout.write(JSON.stringify({ channels, html_bytes: html.length, app_ms: app, static_ms: bare }) + "\n");
} finally {
  server.close();
  await browser.close();
}
