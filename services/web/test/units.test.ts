// Unit tables of the web client's pure helpers: routes, the mention being typed, initials, the
// sidebar's counters.
import { describe, expect, it } from "vitest";
import { href, parseRoute, type Route } from "../src/route.js";
import { mentionAt } from "../src/composer.js";
import { initials } from "../src/people.js";
import { channelCounts } from "../src/counts.js";
import type { StoreState, ThreadEntry } from "@bothy/client";

const T = "0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1ea0";
const M = "0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1eb7";

describe("routes", () => {
  const cases: [string, Route][] = [
    ["#/", { view: "home" }],
    ["", { view: "home" }],
    [`#/c/${T}`, { view: "channel", id: T }],
    [`#/t/${T}`, { view: "thread", id: T }],
    [`#/t/${T}/m/${M}`, { view: "thread", id: T, message: M }],
    ["#/search?q=printer%20jammed", { view: "search", q: "printer jammed" }],
    ["#/search?q=%E2%9D%A4%20%22two%20words%22", { view: "search", q: '❤ "two words"' }],
    [`#/c/${T}/m/${M}`, { view: "home" }],
    ["#/t/not-a-uuid", { view: "home" }],
    ["#/search?q=%E0%A4%A", { view: "search", q: "" }],
  ];
  for (const [hash, want] of cases) {
    it(`parses ${JSON.stringify(hash)}`, () => expect(parseRoute(hash)).toEqual(want));
  }
  it("round-trips every route through href", () => {
    for (const [, r] of cases.filter(([h]) => h && !h.includes("%E0") && !h.includes("not-a") && !h.startsWith(`#/c/${T}/m`))) {
      expect(parseRoute(href(r))).toEqual(r);
    }
  });
});

describe("the mention being typed", () => {
  const cases: [string, number | undefined, ReturnType<typeof mentionAt>][] = [
    ["@", undefined, { start: 0, prefix: "" }],
    ["Thanks @al", undefined, { start: 7, prefix: "al" }],
    ["(@sam", undefined, { start: 1, prefix: "sam" }],
    ["mail alex@example.com", undefined, null], // not after a space: an address, not a mention
    ["@alex done", undefined, null], // the caret is past the mention
    ["@alex done", 3, { start: 0, prefix: "al" }],
    ["two @ro and @sa", 7, { start: 4, prefix: "ro" }],
    ["two @ro and @sa", 8, null], // a space ends a mention
    ["Zoë @zo", undefined, { start: 4, prefix: "zo" }],
  ];
  for (const [text, caret, want] of cases) {
    it(`${JSON.stringify(text)} at ${caret ?? "the end"}`, () => expect(mentionAt(text, caret ?? text.length)).toEqual(want));
  }
});

describe("initials", () => {
  const cases: [string, string][] = [
    ["Sam", "S"],
    ["alex", "A"],
    ["Robin Doe", "RD"],
    ["  Robin   van Doe ", "RD"],
    ["", "?"],
  ];
  for (const [name, want] of cases) it(`of ${JSON.stringify(name)}`, () => expect(initials(name)).toBe(want));
});

describe("the sidebar's counters", () => {
  /** A thread of channel `channel`: `unread` unread messages, `named` named mentions, `counted` counted ones. */
  const thread = (id: string, channel: string, unread: number, named: number, counted = 0): ThreadEntry => ({
    id,
    channel_id: channel,
    version: 1,
    last_message_seq: 10,
    last_read_seq: 10 - unread,
    read_version: 1,
    floor: 0,
    mentions: Object.fromEntries(Array.from({ length: named }, (_, i) => [`${id}-m${i}`, 10 - i])),
    base_mentions: counted,
  });
  const store = (threads: ThreadEntry[]) => ({ threads: Object.fromEntries(threads.map((t) => [t.id, t])) }) as unknown as StoreState;

  it("sums unread messages and mentions, named or only counted, per channel", () => {
    const st = store([thread("t1", "c1", 3, 1), thread("t2", "c1", 2, 0, 2), thread("t3", "c2", 0, 0), thread("t4", "c3", 5, 2)]);
    expect(Object.fromEntries(channelCounts(st))).toEqual({
      c1: { unread: 5, mentions: 3 },
      c2: { unread: 0, mentions: 0 },
      c3: { unread: 5, mentions: 2 },
    });
  });

  it("reads each thread once for all channels, not once per channel", () => {
    // 50 channels of 4 threads: one pass reads 200 channel ids; a pass per channel read 10000.
    const threads = Array.from({ length: 200 }, (_, i) => thread(`t${i}`, `c${i % 50}`, 1, 0));
    let reads = 0;
    const counted = threads.map((t) => {
      const { channel_id, ...rest } = t;
      return Object.defineProperty({ ...rest }, "channel_id", {
        enumerable: true,
        get: () => (reads++, channel_id),
      }) as ThreadEntry;
    });
    const counts = channelCounts(store(counted));
    expect(counts.size).toBe(50);
    expect(counts.get("c7")).toEqual({ unread: 4, mentions: 0 });
    expect(reads).toBe(threads.length);
  });
});
