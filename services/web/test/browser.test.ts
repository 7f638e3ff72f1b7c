// The web client in a real browser (Debian's Chromium through playwright-core) against a real
// bothy serve on a throwaway embedded PostgreSQL, which serves the build in dist/ (web.dir):
// Alex and Sam in two browser contexts sign in, post, see each other live, edit, delete, keep a
// draft across a reload, watch the unread badge move, go offline and come back; Robin, without
// a grant, sees none of it; one flow runs with the keyboard alone; one on a phone-sized screen.
// Screenshots of the main views go to .test-tmp/screenshots for people to look at.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { BothyServer } from "./server.js";

const bin = process.env.BOTHY_BIN;
if (!bin) throw new Error("BOTHY_BIN names the bothy binary to test against (make web-test builds it)");
const here = fileURLToPath(new URL(".", import.meta.url));
// The build to serve: dist/, or WEB_DIST (gate-fixtures serves a drifted copy to prove the tests fail).
const dist = process.env.WEB_DIST || join(here, "..", "dist");
const shots = join(here, "..", ".test-tmp", "screenshots");

let server: BothyServer;
let browser: Browser;
let sam: { id: string; token: string };
let robin: { id: string; token: string };
let support: string, tickets: string, general: string, printer = "";
const problems: string[] = [];

/** A new browser context and page; every CSP violation, page error and console error is recorded. */
async function open(viewport = { width: 1280, height: 800 }): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ viewport, baseURL: server.baseUrl });
  const page = await ctx.newPage();
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" && !/Failed to load resource|ERR_INTERNET_DISCONNECTED|WebSocket/.test(m.text())) problems.push(`console: ${m.text()}`);
    if (/Content Security Policy/i.test(m.text())) problems.push(`csp: ${m.text()}`);
  });
  return { ctx, page };
}

// Pages a test opened for itself: closed after it, with a screenshot when it failed.
const own: Page[] = [];
afterEach(async (ctx) => {
  for (const [i, p] of own.splice(0).entries()) {
    if (ctx.task.result?.state === "fail") await p.screenshot({ path: join(shots, `failed-${ctx.task.name.slice(0, 20).replace(/\W+/g, "-")}-${i}.png`) }).catch(() => undefined);
    await p.close().catch(() => undefined);
  }
});

async function signIn(page: Page, token: string): Promise<void> {
  await page.goto("/");
  await page.getByLabel("Access token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator('.status[data-status="live"]').waitFor();
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: false });
}

const sidebarLink = (page: Page, name: string) => page.locator("nav.sidebar a", { hasText: name });
const threadLink = (page: Page, title: string) => page.locator("ul.threads a", { hasText: title });
const messages = (page: Page) => page.locator("ol.messages li.message:not(.pending) .text");

async function post(page: Page, text: string): Promise<void> {
  const box = page.getByLabel("Message", { exact: true });
  await box.fill(text);
  await box.press("Enter");
  await page.locator("ol.messages li.message:not(.pending)", { hasText: text }).waitFor();
}

/** Presses Tab until the focused element matches (at most max times); fails otherwise. */
async function tabTo(page: Page, matches: (el: { tag: string; text: string; label: string }) => boolean, max = 40): Promise<void> {
  const seen: string[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    const el = await page.evaluate(() => {
      const a = document.activeElement as HTMLElement | null;
      return { tag: a?.tagName.toLowerCase() ?? "", text: a?.textContent?.trim() ?? "", label: a?.getAttribute("aria-label") ?? (a?.id ? (document.querySelector(`label[for="${a.id}"]`)?.textContent ?? "") : "") };
    });
    if (matches(el)) return;
    seen.push(`${el.tag}:${el.text.slice(0, 30)}`);
  }
  throw new Error(`tabTo: never reached the element; focused in turn: ${seen.join(" | ")}`);
}

/** The text of a draft in the state the engine saved in IndexedDB (IndexedDBStorage's layout). */
async function storedDraft(page: Page, principal: string, key: string): Promise<string | undefined> {
  return page.evaluate(
    ([principal, key]) =>
      new Promise<string | undefined>((resolve, reject) => {
        const open = indexedDB.open(`bothy:${location.origin}:${principal}`);
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const get = open.result.transaction("state").objectStore("state").get("current");
          get.onsuccess = () => {
            open.result.close();
            resolve((get.result as { drafts?: Record<string, { content_md?: string }> } | undefined)?.drafts?.[key]?.content_md);
          };
          get.onerror = () => reject(get.error);
        };
      }),
    [principal, key] as const,
  );
}

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  server = new BothyServer(bin, { BOTHY_WEB_DIR: dist, BOTHY_GATEWAY_HEARTBEAT_INTERVAL: "1s" });
  await server.start();
  sam = await server.person("Sam", "sam");
  robin = await server.person("Robin", "robin");
  support = (await server.call<{ id: string }>("POST", "/api/v1/spaces", { name: "Support" }, 201)).id;
  tickets = (await server.call<{ id: string }>("POST", `/api/v1/spaces/${support}/channels`, { name: "tickets", topic: "One thread per ticket" }, 201)).id;
  general = (await server.call<{ id: string }>("POST", `/api/v1/spaces/${support}/channels`, { name: "general" }, 201)).id;
  await server.call("POST", "/api/v1/grants", { principal_id: sam.id, resource_kind: "space", resource_id: support, role: "member" }, 201);
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}, 180000);

afterAll(async () => {
  await browser?.close();
  await server?.destroy();
});

describe("the web client in Chromium against bothy serve", () => {
  let alex: Page, samPage: Page, samCtx: BrowserContext;

  it("is served at / under the Content-Security-Policy, explains tokens, and refuses a bad one", async () => {
    const { page } = await open();
    const res = await page.goto("/");
    expect(res!.headers()["content-security-policy"]).toContain("default-src 'self'");
    await expect(page.getByRole("heading", { name: "Sign in to bothy" }).isVisible()).resolves.toBe(true);
    const help = await page.locator("#token-help").textContent();
    expect(help).toContain("make run");
    expect(help).toContain("make demo");
    expect(help).toContain("bothy admin token");
    await shot(page, "01-sign-in");
    await page.getByLabel("Access token").fill("bothy_not_a_real_token_at_all_0000");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "not accepted" }).waitFor();
    await page.close();
  });

  it("signs Alex in, who starts a thread; signs Sam in, who sees the space, the channels and the unread mention badge", async () => {
    alex = (await open()).page;
    await signIn(alex, server.ownerToken);
    await sidebarLink(alex, "# tickets").click();
    await alex.getByRole("button", { name: "New thread" }).click();
    await alex.getByLabel("Title (optional)").fill("Printer on floor 2");
    await alex.getByLabel("First message").fill("@sam the printer on floor 2 is jammed again");
    await alex.getByRole("button", { name: "Start thread" }).click();
    await alex.getByRole("heading", { name: "Printer on floor 2" }).waitFor();
    printer = alex.url().split("/t/")[1]!;
    expect(printer).toMatch(/^[0-9a-f-]{36}$/);
    ({ ctx: samCtx, page: samPage } = await open());
    await signIn(samPage, sam.token);
    const link = sidebarLink(samPage, "# tickets");
    await link.locator('[data-testid="unread"]', { hasText: "1" }).waitFor();
    await link.locator('[data-testid="mentions"]', { hasText: "@1" }).waitFor();
    expect(await samPage.locator("nav.sidebar h2").allTextContents()).toEqual(["Support"]);
    await shot(samPage, "02-sidebar-badges");
  });

  it("Alex posts in the thread; Sam's badge moves live; Sam reads it, replies, and Alex sees it live", async () => {
    await messages(alex).first().waitFor();
    await post(alex, "Hello Sam, on it?");

    const badge = sidebarLink(samPage, "# tickets").locator('[data-testid="unread"]');
    await badge.filter({ hasText: "2" }).waitFor();

    await sidebarLink(samPage, "# tickets").click();
    await threadLink(samPage, "Printer on floor 2").click();
    await samPage.locator("ol.messages .text", { hasText: "Hello Sam, on it?" }).waitFor();
    await badge.waitFor({ state: "detached" }); // read: the badge goes
    await post(samPage, "On my way, @alex");
    await alex.locator("ol.messages .text", { hasText: "On my way, @alex" }).waitFor();
    expect(await messages(alex).allTextContents()).toEqual(["@sam the printer on floor 2 is jammed again", "Hello Sam, on it?", "On my way, @alex"]);
    await shot(samPage, "03-thread-sam");
    await shot(alex, "04-thread-alex");
  });

  it("edits and deletes one's own message, live for the other; others' messages have no such buttons", async () => {
    const mine = alex.locator("li.message", { hasText: "Hello Sam, on it?" });
    await mine.getByRole("button", { name: "Edit this message" }).click();
    const box = alex.getByLabel("Edit message");
    await box.fill("Hello Sam, are you on it?");
    await box.press("Enter");
    await samPage.locator("li.message", { hasText: "Hello Sam, are you on it?" }).locator("text=(edited)").waitFor();
    const others = samPage.locator("li.message", { hasText: "Hello Sam, are you on it?" });
    expect(await others.getByRole("button", { name: /edit|delete/i }).count()).toBe(0);

    const edited = alex.locator("li.message", { hasText: "Hello Sam, are you on it?" });
    await edited.getByRole("button", { name: "Delete this message" }).click();
    await edited.getByRole("button", { name: "Really delete this message" }).click();
    await samPage.locator("li.message.redacted", { hasText: "Message deleted" }).waitFor();
    expect(await messages(samPage).allTextContents()).toEqual(["@sam the printer on floor 2 is jammed again", "On my way, @alex"]);
  });

  it("keeps a draft across a reload, and the reload resumes from the stored cursor without a snapshot", async () => {
    const draftSaved = samPage.waitForResponse((r) => r.url().includes(`/channels/${tickets}/draft`) && r.request().method() === "PUT" && r.status() === 200);
    await samPage.getByLabel("Message", { exact: true }).fill("Half a reply");
    await draftSaved;
    // The draft.saved event reaches the store, which the engine saves whole in IndexedDB.
    await expect.poll(() => storedDraft(samPage, sam.id, `${tickets}/${printer}`), { timeout: 10000 }).toBe("Half a reply");
    const snapshots: string[] = [];
    samPage.on("request", (r) => r.url().includes("/api/v1/sync/snapshot") && snapshots.push(r.url()));
    await samPage.reload();
    await samPage.locator('.status[data-status="live"]').waitFor();
    await expect.poll(() => samPage.getByLabel("Message", { exact: true }).inputValue()).toBe("Half a reply");
    expect(snapshots).toEqual([]);
    await expect.poll(() => messages(samPage).allTextContents()).toEqual(["@sam the printer on floor 2 is jammed again", "On my way, @alex"]);
    await shot(samPage, "05-draft-after-reload");
  });

  it("catches up after going offline, every message once and in order, without a reload", async () => {
    await samPage.evaluate(() => ((window as unknown as { stillHere: boolean }).stillHere = true));
    await samCtx.setOffline(true);
    await samPage.locator('.status[data-status="offline"]').waitFor();
    await shot(samPage, "06-offline");
    for (const text of ["one while Sam is away", "two while Sam is away", "three while Sam is away"]) {
      await server.call("POST", `/api/v1/threads/${printer}/messages`, { content_md: text }, 201);
    }
    await samPage.waitForTimeout(1500);
    expect(await samPage.locator("ol.messages .text", { hasText: "while Sam is away" }).count()).toBe(0); // the network is cut
    await samCtx.setOffline(false);
    await samPage.locator("ol.messages .text", { hasText: "three while Sam is away" }).waitFor({ timeout: 30000 });
    await samPage.locator('.status[data-status="live"]').waitFor({ timeout: 30000 });
    expect(await messages(samPage).allTextContents()).toEqual([
      "@sam the printer on floor 2 is jammed again",
      "On my way, @alex",
      "one while Sam is away",
      "two while Sam is away",
      "three while Sam is away",
    ]);
    expect(await samPage.evaluate(() => (window as unknown as { stillHere?: boolean }).stillHere)).toBe(true);
    // The open thread counts as read, on the server too.
    await sidebarLink(samPage, "# tickets").locator('[data-testid="unread"]').waitFor({ state: "detached" });
    await expect
      .poll(async () => (await server.call<{ unread_threads: unknown[] }>("GET", "/api/v1/sync/snapshot", undefined, 200, sam.token)).unread_threads, { timeout: 10000 })
      .toEqual([]);
    await samPage.goto(`${server.baseUrl}/#/`); // Sam leaves the thread, so what comes next stays unread
  });

  it("shows Robin, who has no grant, none of it", async () => {
    const { page } = await open();
    await signIn(page, robin.token);
    await page.getByText("You are in no channel yet").waitFor();
    expect(await page.locator("nav.sidebar a").count()).toBe(0);
    await page.goto(`/#/t/${printer}`);
    await page.getByRole("heading", { name: "Thread not found" }).waitFor();
    expect(await page.locator("ol.messages li").count()).toBe(0);
    await page.close();
  });

  it("works with the keyboard alone: sign in, open a channel and a thread, post and edit", async () => {
    // The thread is read: a new client of Sam's lists it from listChannelThreads.
    const { page } = await open();
    own.push(page);
    await page.goto("/");
    await page.locator("#token:focus").waitFor(); // the token field has the focus
    await page.keyboard.type(sam.token);
    await page.keyboard.press("Enter");
    await page.locator('.status[data-status="live"]').waitFor();
    await tabTo(page, (el) => el.tag === "a" && el.text.startsWith("# tickets"));
    await page.keyboard.press("Enter");
    await page.locator("#channel-title:focus").waitFor(); // the opened view's heading takes the focus
    await tabTo(page, (el) => el.tag === "a" && /printer on floor 2/i.test(el.text));
    await page.keyboard.press("Enter");
    await page.locator("#thread-title:focus").waitFor();
    await tabTo(page, (el) => el.tag === "textarea" && el.label === "Message");
    // The draft of the reload test is restored (getDraft: this client's snapshot only names it);
    // the keyboard clears it.
    await expect.poll(() => page.locator("#composer").inputValue()).toBe("Half a reply");
    await page.keyboard.press("Control+A");
    await page.keyboard.press("Backspace");
    await page.keyboard.type("Typed without a mouse");
    await page.keyboard.press("Enter");
    await page.locator("ol.messages li.message:not(.pending)", { hasText: "Typed without a mouse" }).waitFor();
    // Back to the message's Edit button, from the composer, with Shift+Tab.
    for (let i = 0; i < 20; i++) {
      await page.keyboard.press("Shift+Tab");
      const label = await page.evaluate(() => document.activeElement?.getAttribute("aria-label"));
      if (label === "Edit this message") break;
    }
    expect(await page.evaluate(() => document.activeElement?.closest("li")?.textContent)).toContain("Typed without a mouse");
    await page.keyboard.press("Enter");
    await page.locator('textarea[id^="edit-"]:focus').waitFor(); // Edit moves the focus into the edit box
    await page.keyboard.press("End");
    await page.keyboard.type(", and edited");
    await page.keyboard.press("Enter");
    await alex.locator("ol.messages .text", { hasText: "Typed without a mouse, and edited" }).waitFor();
    await page.locator('button[aria-label="Edit this message"]:focus').waitFor(); // Save gives the focus back to Edit
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    expect(outline).not.toBe("none"); // the focus is visible
    await shot(page, "07-keyboard-focus");
    await page.close();
  });

  it("is usable on a phone-sized screen: one pane at a time, with a way back", async () => {
    await server.call("POST", `/api/v1/threads/${printer}/messages`, { content_md: "Seen on a phone?" }, 201);
    const { page } = await open({ width: 390, height: 844 });
    own.push(page);
    await signIn(page, sam.token);
    await shot(page, "08-phone-channels");
    await sidebarLink(page, "# tickets").click();
    await threadLink(page, "Printer on floor 2").waitFor(); // the click changes the route; the next render shows the threads
    await expect.poll(() => page.locator("nav.sidebar").isVisible()).toBe(false);
    await shot(page, "09-phone-threads");
    await threadLink(page, "Printer on floor 2").click();
    await page.locator("ol.messages .text", { hasText: "Seen on a phone?" }).waitFor();
    expect(await page.locator("section.channel").isVisible()).toBe(false);
    expect(await page.getByLabel("Message", { exact: true }).isVisible()).toBe(true);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(390); // nothing runs off the side
    await shot(page, "10-phone-thread");
    await page.getByRole("link", { name: "Back to the threads" }).click();
    await threadLink(page, "Printer on floor 2").waitFor();
    await page.getByRole("link", { name: "Back to the channels" }).click();
    await sidebarLink(page, "# tickets").waitFor();
    await page.close();
  });

  it("names authors from the directory (getPrincipal), with their initials, in a client that saw none of their events", async () => {
    // A fresh context has no names cached and Alex's posts all precede its snapshot, so only
    // getPrincipal can name him.
    const { page } = await open();
    own.push(page);
    const asked: string[] = [];
    page.on("request", (r) => /\/api\/v1\/principals\/[0-9a-f-]{36}$/.test(r.url()) && asked.push(r.url()));
    await signIn(page, sam.token);
    await page.goto(`/#/t/${printer}`);
    const first = page.locator("li.message", { hasText: "the printer on floor 2 is jammed again" });
    await first.locator(".author", { hasText: "Alex" }).waitFor();
    expect(await first.locator('[data-testid="avatar"]').textContent()).toBe("A");
    const authors = await page.locator("ol.messages li.message:not(.redacted) .author").allTextContents();
    expect(authors.length).toBeGreaterThan(3);
    expect(authors.filter((a) => a !== "Alex" && a !== "Sam")).toEqual([]);
    expect(asked.some((u) => u.endsWith(server.ownerId))).toBe(true);
    await page.close();
  });

  it("lists a channel's threads from listChannelThreads: titles, excerpts, newest first, unread and mention badges per thread, live additions", async () => {
    const start = (body: Record<string, string>) => server.call<{ id: string }>("POST", `/api/v1/channels/${general}/threads`, body, 201);
    const oldest = await start({ title: "Coffee machine", content_md: "The coffee machine is back" });
    const untitled = await start({ content_md: "Who has the key to the bike shed?" });
    const mention = await start({ title: "Badge reader", content_md: "@sam can you look at the badge reader?" });
    // Sam has read the first two; the third (with a mention) is unread.
    for (const t of [oldest.id, untitled.id]) await server.call("PUT", `/api/v1/threads/${t}/read-state`, { last_read_seq: 1 }, 200, sam.token);
    const { page } = await open();
    own.push(page);
    await signIn(page, sam.token);
    await sidebarLink(page, "# general").click();
    const rows = page.locator("ul.threads a .title");
    await expect.poll(() => rows.allTextContents()).toEqual(["Badge reader", "Who has the key to the bike shed?", "Coffee machine"]);
    const badge = threadLink(page, "Badge reader");
    await badge.locator('[data-testid="unread"]', { hasText: "1" }).waitFor();
    await badge.locator('[data-testid="mentions"]', { hasText: "@1" }).waitFor();
    expect(await threadLink(page, "Coffee machine").locator(".badge").count()).toBe(0);
    await expect.poll(() => threadLink(page, "Coffee machine").locator(".preview").textContent()).toBe("Started by Alex, no replies");
    await shot(page, "11-channel-threads");
    // A reply moves its thread to the top, live, with its badge.
    await server.call("POST", `/api/v1/threads/${oldest.id}/messages`, { content_md: "and it makes tea" }, 201);
    await expect.poll(() => rows.allTextContents()).toEqual(["Coffee machine", "Badge reader", "Who has the key to the bike shed?"]);
    await threadLink(page, "Coffee machine").locator('[data-testid="unread"]', { hasText: "1" }).waitFor();
    // Opening the mentioned thread reads it: its badges go.
    await badge.click();
    await page.getByRole("heading", { name: "Badge reader" }).waitFor();
    await badge.locator(".badge").first().waitFor({ state: "detached" });
    await page.close();
  });

  it("adds and removes reactions, counted with the reader's own marked, live for the other person", async () => {
    await samPage.goto(`${server.baseUrl}/#/t/${printer}`);
    await alex.goto(`${server.baseUrl}/#/t/${printer}`);
    const samMsg = samPage.locator("li.message", { hasText: "the printer on floor 2 is jammed again" });
    const alexMsg = alex.locator("li.message", { hasText: "the printer on floor 2 is jammed again" });
    await samMsg.getByRole("button", { name: "Add reaction" }).click();
    await samMsg.getByRole("group", { name: "Pick a reaction" }).waitFor();
    await samMsg.getByRole("button", { name: "thumbs up", exact: true }).click();
    const alexThumbs = alexMsg.locator('button[data-reaction="👍"]');
    await alexThumbs.filter({ hasText: "1" }).waitFor(); // live for Alex
    expect(await alexThumbs.getAttribute("aria-pressed")).toBe("false");
    // Each page applies the event from its own connection: Sam's may come a moment after Alex's.
    const samThumbsPressed = () => samMsg.locator('button[data-reaction="👍"]').getAttribute("aria-pressed");
    await expect.poll(samThumbsPressed).toBe("true");
    // Alex joins in, and adds a second kind with the keyboard: Escape closes the picker, Enter picks.
    await alexThumbs.click();
    await samMsg.locator('button[data-reaction="👍"]', { hasText: "2" }).waitFor();
    const addButton = alexMsg.getByRole("button", { name: "Add reaction" });
    const picker = alexMsg.getByRole("group", { name: "Pick a reaction" });
    await addButton.click();
    await picker.waitFor();
    await addButton.focus(); // the picker open, the focus on "Add reaction": Escape closes it too
    await alex.keyboard.press("Escape");
    await picker.waitFor({ state: "detached" });
    await addButton.click();
    await picker.waitFor();
    await expect.poll(() => alex.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("thumbs up (yours; remove)");
    await alex.keyboard.press("Escape"); // from a choice
    await picker.waitFor({ state: "detached" });
    const focused = () => alex.evaluate(() => document.activeElement?.getAttribute("aria-label"));
    await expect.poll(focused).toBe("Add reaction"); // Escape gives the focus back
    await alex.keyboard.press("Enter"); // opens the picker, its first choice focused
    await expect.poll(focused).toBe("thumbs up (yours; remove)");
    await alex.keyboard.press("Tab");
    await alex.keyboard.press("Enter"); // the second choice: heart
    await samMsg.locator('button[data-reaction="❤️"]', { hasText: "1" }).waitFor();
    await shot(samPage, "12-thread-reactions");
    // Sam takes the thumbs back: Alex's stays, counted once and still his.
    await samMsg.locator('button[data-reaction="👍"]').click();
    await alexThumbs.filter({ hasText: "1" }).waitFor();
    expect(await alexThumbs.getAttribute("aria-pressed")).toBe("true");
    await expect.poll(samThumbsPressed).toBe("false");
    const id = await alexMsg.getAttribute("data-id");
    const listed = await server.call<{ items: { id: string; reactions: unknown[] }[] }>("GET", `/api/v1/threads/${printer}/messages?after=0`);
    expect(listed.items.find((m) => m.id === id)!.reactions).toEqual([
      { reaction: "👍", count: 1, me: true },
      { reaction: "❤️", count: 1, me: true },
    ]);
  });

  it("autocompletes a mention: @ lists people (listbox), arrows move, Escape closes, Enter inserts @handle", async () => {
    const box = samPage.getByLabel("Message", { exact: true });
    await box.click();
    await box.fill("");
    await samPage.keyboard.type("Thanks @");
    const list = samPage.getByRole("listbox", { name: "People to mention" });
    await list.waitFor();
    const options = list.getByRole("option");
    await expect.poll(() => options.allTextContents()).toEqual(["AAlex @alex", "RRobin @robin"]); // everyone but Sam, in handle order
    const active = () => samPage.evaluate(() => document.getElementById(document.getElementById("composer")!.getAttribute("aria-activedescendant") ?? "")?.textContent);
    expect(await active()).toContain("@alex");
    expect(await options.first().getAttribute("aria-selected")).toBe("true");
    await samPage.keyboard.press("ArrowDown");
    expect(await active()).toContain("@robin");
    expect(await options.nth(1).getAttribute("aria-selected")).toBe("true");
    await samPage.keyboard.press("ArrowDown"); // wraps
    expect(await active()).toContain("@alex");
    await samPage.keyboard.press("ArrowUp");
    expect(await active()).toContain("@robin");
    await samPage.keyboard.press("Escape");
    await list.waitFor({ state: "detached" });
    expect(await box.getAttribute("aria-activedescendant")).toBeNull();
    expect(await box.inputValue()).toBe("Thanks @");
    await samPage.keyboard.type("A");
    await expect.poll(() => options.allTextContents()).toEqual(["AAlex @alex"]);
    await shot(samPage, "13-mention-autocomplete");
    // Keys typed right after the insert land after it (the caret is placed at once, not at the next frame).
    await samPage.keyboard.press("Enter");
    await samPage.keyboard.type("for the coffee");
    await list.waitFor({ state: "detached" });
    expect(await box.inputValue()).toBe("Thanks @alex for the coffee");
    await samPage.keyboard.press("Enter");
    const posted = alex.locator("li.message", { hasText: "Thanks @alex for the coffee" });
    await posted.waitFor();
    const m = await server.call<{ mention_ids: string[] }>("GET", `/api/v1/messages/${await posted.getAttribute("data-id")}`);
    expect(m.mention_ids).toEqual([server.ownerId]); // the server recorded the mention
  });

  it("searches messages: hits with the matched words marked; a hit opens its thread at the message; Robin finds nothing", async () => {
    await samPage.goto(`${server.baseUrl}/#/`);
    await samPage.getByRole("searchbox", { name: "Search messages" }).fill("jammed");
    await samPage.keyboard.press("Enter");
    await samPage.getByRole("heading", { name: "Search: jammed" }).waitFor();
    const hits = samPage.getByRole("list", { name: "Search results" }).getByRole("link");
    await hits.first().waitFor();
    expect(await hits.count()).toBe(1);
    expect(await hits.first().locator("mark").allTextContents()).toEqual(["jammed"]);
    expect(await hits.first().locator(".excerpt").textContent()).toContain("the printer on floor 2 is jammed again");
    expect(await hits.first().locator(".author").textContent()).toBe("Alex");
    await expect.poll(() => hits.first().locator(".where").textContent()).toBe("# tickets, Printer on floor 2");
    await samPage.getByRole("searchbox", { name: "Search messages" }).fill("while away");
    await samPage.keyboard.press("Enter");
    await samPage.getByRole("heading", { name: "Search: while away" }).waitFor();
    await expect.poll(() => hits.count()).toBe(3);
    await shot(samPage, "14-search-results");
    const target = await hits.nth(1).getAttribute("data-message");
    await hits.nth(1).click();
    await samPage.getByRole("heading", { name: "Printer on floor 2" }).waitFor();
    const focused = samPage.locator(`li.message.target[data-id="${target}"]:focus`);
    await focused.waitFor();
    expect(await focused.locator(".text").textContent()).toMatch(/while Sam is away/);
    // Robin, without a grant, finds none of it.
    const { page } = await open();
    own.push(page);
    await signIn(page, robin.token);
    await page.getByRole("searchbox", { name: "Search messages" }).fill("jammed");
    await page.keyboard.press("Enter");
    await page.getByText("No messages match.").waitFor();
    await page.close();
  });

  it("restores a draft saved elsewhere (getDraft) when the thread is opened, and on a phone too", async () => {
    await server.call("PUT", `/api/v1/channels/${tickets}/draft`, { thread_id: printer, content_md: "Written on my laptop" }, 200, sam.token);
    const { page } = await open({ width: 390, height: 844 });
    own.push(page);
    const reads: string[] = [];
    page.on("request", (r) => r.method() === "GET" && r.url().includes(`/channels/${tickets}/draft`) && reads.push(r.url()));
    await signIn(page, sam.token);
    await page.goto(`/#/t/${printer}`);
    await expect.poll(() => page.getByLabel("Message", { exact: true }).inputValue()).toBe("Written on my laptop");
    expect(reads.length).toBe(1);
    await page.locator("li.message", { hasText: "Thanks @alex for the coffee" }).waitFor();
    await page.locator("li.message", { hasText: "Thanks @alex for the coffee" }).scrollIntoViewIfNeeded();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await shot(page, "15-phone-thread-reactions-draft");
    await page.getByRole("searchbox", { name: "Search messages" }).fill("coffee");
    await page.keyboard.press("Enter");
    await page.getByRole("list", { name: "Search results" }).getByRole("link").first().waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await shot(page, "16-phone-search");
    await page.close();
  });

  it("raised no page error, console error or CSP violation", () => {
    expect(problems).toEqual([]);
  });
});
