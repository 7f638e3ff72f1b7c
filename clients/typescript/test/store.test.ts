import { describe, expect, it } from "vitest";
import type { Envelope, Snapshot } from "../src/events.js";
import { applyEvent, fromSnapshot, hydrateMentions, mergeStructure, snapshotView, storeView, threadMessages } from "../src/store.js";

const ME = "00000000-0000-4000-8000-0000000000a1";
const ALEX = "00000000-0000-4000-8000-0000000000a2";
const SP = "00000000-0000-4000-8000-0000000000b1";
const SP2 = "00000000-0000-4000-8000-0000000000b2";
const CH = "00000000-0000-4000-8000-0000000000c1";
const CH2 = "00000000-0000-4000-8000-0000000000c2";
const TH = "00000000-0000-4000-8000-0000000000d1";
const TH2 = "00000000-0000-4000-8000-0000000000d2";
const M1 = "00000000-0000-4000-8000-0000000000f1";
const M2 = "00000000-0000-4000-8000-0000000000f2";
const T = "2026-12-01T09:30:15.123456Z";

function snap(head: number, over: Partial<Snapshot> = {}): Snapshot {
  return {
    head_seq: head,
    sync_epoch: "00000000-0000-4000-8000-0000000000e1",
    permission_version: 1,
    is_owner: false,
    principal: { id: ME, kind: "person", display_name: "Sam", handle: "sam" },
    instance: { id: "00000000-0000-4000-8000-000000000001", name: "bothy", sync_epoch: "00000000-0000-4000-8000-0000000000e1", version: 1 } as Snapshot["instance"],
    spaces: [{ id: SP, name: "Support", version: 1, created_at: T, level: "member", capabilities: [] }],
    channels: [{ id: CH, space_id: SP, kind: "standard", name: "tickets", participant_ids: [], version: 1, created_at: T, level: "member", capabilities: [] }],
    sidebar: { sections: [], version: 0 },
    unread_threads: [],
    active_runs: [],
    agents: [],
    settings: [],
    drafts: [],
    features: [],
    ...over,
  };
}

let seq = 100;
function ev(type: string, payload: Record<string, unknown>, over: Partial<Envelope> = {}): Envelope {
  seq++;
  return {
    seq,
    id: `00000000-0000-4000-9000-${seq.toString().padStart(12, "0")}`,
    type,
    occurred_at: T,
    actor: { id: ALEX, kind: "person", display_name: "Alex", handle: "alex" },
    space_id: SP,
    channel_id: CH,
    resource: { kind: "message", id: M1 },
    payload,
    ...over,
  } as Envelope;
}

const msg = (type: string, id: string, s: number, mentions: string[] = [], thread = TH) =>
  ev(type, {
    message_id: id, thread_id: thread, channel_id: CH, author_id: ALEX, seq: s, content_md: `m${s}`,
    ...(mentions.length ? { mention_ids: mentions } : {}),
    ...(type === "message.created" ? { created_at: T } : { edited_at: T }),
  });
const unread = (last: number, read: number, mentions: number, thread = TH) => ({
  thread_id: thread, channel_id: CH, space_id: SP, last_message_seq: last, last_read_seq: read, unread_count: last - read, mention_count: mentions,
});

interface Case {
  name: string;
  before: Snapshot;
  events: () => Envelope[];
  after: (head: number) => Snapshot;
}

// Each case: the snapshot before, the events after its head, the snapshot after them; the
// store built from the first with the events applied must have the view of the last.
const cases: Case[] = [
  {
    name: "a new thread with a mention, then a message",
    before: snap(100),
    events: () => [
      ev("thread.created", { thread_id: TH, channel_id: CH, created_by: ALEX, version: 1, title: "Printer" }),
      msg("message.created", M1, 1, [ME]),
      msg("message.created", M2, 2),
    ],
    after: (h) => snap(h, { unread_threads: [unread(2, 0, 1)] }),
  },
  {
    name: "an edit that drops the mention, and a delete",
    before: snap(100),
    events: () => [msg("message.created", M1, 1, [ME]), msg("message.edited", M1, 1), msg("message.created", M2, 2, [ME]),
      ev("message.deleted", { message_id: M2, thread_id: TH, channel_id: CH, author_id: ALEX, seq: 2, redacted_at: T })],
    after: (h) => snap(h, { unread_threads: [unread(2, 0, 0)] }),
  },
  {
    name: "read to the end clears the counters",
    before: snap(100, { unread_threads: [unread(3, 1, 0)] }),
    events: () => [ev("read_state.updated", { thread_id: TH, channel_id: CH, last_read_seq: 3, version: 2 })],
    after: (h) => snap(h),
  },
  {
    name: "a message in a thread the snapshot did not list (read to its end)",
    before: snap(100),
    events: () => [msg("message.created", M1, 7)],
    after: (h) => snap(h, { unread_threads: [unread(7, 6, 0)] }),
  },
  {
    name: "personal data: drafts, settings, sidebar",
    before: snap(100, { drafts: [{ channel_id: CH, version: 1 }] }),
    events: () => [
      ev("draft.saved", { channel_id: CH, thread_id: TH, content_md: "half", version: 1 }),
      ev("draft.deleted", { channel_id: CH, version: 2 }),
      ev("setting.updated", { key: "theme", value: "dark", version: 1 }),
      ev("sidebar.updated", { sections: [{ key: "w", title: "Work", collapsed: false, channel_ids: [CH, CH2] }], version: 1 }),
    ],
    after: (h) => snap(h, {
      drafts: [{ channel_id: CH, thread_id: TH, version: 1 }],
      settings: [{ key: "theme", value: "dark", version: 1 }],
      sidebar: { sections: [{ key: "w", title: "Work", collapsed: false, channel_ids: [CH] }], version: 1 },
    }),
  },
  {
    name: "structure: a space and channel created, a channel updated, then archived",
    before: snap(100),
    events: () => [
      ev("space.created", { space_id: SP2, name: "Events", version: 1 }),
      ev("channel.created", { channel_id: CH2, space_id: SP2, kind: "standard", name: "meetups", version: 1 }),
      ev("channel.updated", { channel_id: CH, space_id: SP, topic: "new", version: 2 }),
      ev("space.updated", { space_id: SP, name: "Help", version: 2 }),
      ev("channel.archived", { channel_id: CH, space_id: SP, archived_at: T, version: 3 }),
    ],
    after: (h) => snap(h, {
      spaces: [{ id: SP, name: "Help", version: 2, created_at: T, capabilities: [] }, { id: SP2, name: "Events", version: 1, created_at: T, capabilities: [] }],
      channels: [{ id: CH2, space_id: SP2, kind: "standard", name: "meetups", participant_ids: [], version: 1, created_at: T, level: "member", capabilities: [] }],
    }),
  },
  {
    name: "an archived space takes its channels and their unread threads",
    before: snap(100, { unread_threads: [unread(2, 0, 0)] }),
    events: () => [ev("space.archived", { space_id: SP, archived_at: T, version: 2 })],
    after: (h) => snap(h, { spaces: [], channels: [] }),
  },
  {
    name: "agents and the permission version",
    before: snap(100),
    events: () => [
      ev("agent.created", { agent_id: ALEX, display_name: "Helper", handle: "helper" }),
      ev("permissions.changed", { principal_id: ME, permission_version: 2 }),
      ev("flags.updated", { keys: ["x"] }),
      ev("some.future_type", { anything: 1 }),
    ],
    after: (h) => snap(h, { permission_version: 2, agents: [{ agent: { id: ALEX, kind: "agent", display_name: "Helper", handle: "helper" }, state: "unknown" }] }),
  },
];

describe("reducers: snapshot plus events equals the later snapshot", () => {
  for (const c of cases) {
    it(c.name, () => {
      const st = fromSnapshot(c.before);
      expect(storeView(st)).toEqual(snapshotView(c.before));
      const events = c.events();
      for (const e of events) applyEvent(st, e);
      const head = events[events.length - 1]!.seq;
      expect(storeView(st)).toEqual(snapshotView(c.after(head)));

      // Delivery is at least once: the same events again change nothing.
      for (const e of events) applyEvent(st, e);
      expect(storeView(st)).toEqual(snapshotView(c.after(head)));
    });
  }
});

describe("reducers: details", () => {
  it("keeps message text, edits and redaction, and ignores a replayed create after the delete", () => {
    const st = fromSnapshot(snap(100));
    const created = msg("message.created", M1, 1);
    applyEvent(st, created);
    applyEvent(st, msg("message.edited", M1, 1));
    expect(threadMessages(st, TH)[0]).toMatchObject({ content_md: "m1", edited_at: T, redacted: false });
    applyEvent(st, ev("message.deleted", { message_id: M1, thread_id: TH, channel_id: CH, seq: 1, redacted_at: T }));
    applyEvent(st, created);
    expect(threadMessages(st, TH)[0]).toMatchObject({ content_md: "", redacted: true, redacted_at: T, author_id: ALEX });
  });

  it("keeps the invocation a reply answers through an edit, and gives a message without one no member", () => {
    const st = fromSnapshot(snap(100));
    const INV = "00000000-0000-4000-8000-0000000000e9";
    const reply = msg("message.created", M1, 1);
    (reply.payload as Record<string, unknown>).invocation_id = INV;
    applyEvent(st, reply);
    applyEvent(st, msg("message.created", M2, 2));
    expect(threadMessages(st, TH)[0]!.invocation_id).toBe(INV);
    expect(threadMessages(st, TH)[1]).not.toHaveProperty("invocation_id");
    applyEvent(st, msg("message.edited", M1, 1));
    expect(threadMessages(st, TH)[0]).toMatchObject({ content_md: "m1", edited_at: T, invocation_id: INV });
  });

  it("counts reactions from reaction.added and reaction.removed, with me for the store's principal", () => {
    const st = fromSnapshot(snap(100));
    applyEvent(st, msg("message.created", M1, 1));
    const react = (type: string, who: string, reaction: string) =>
      ev(type, { message_id: M1, thread_id: TH, channel_id: CH, principal_id: who, reaction });
    applyEvent(st, react("reaction.added", ALEX, ":thumbs_up:"));
    applyEvent(st, react("reaction.added", ME, ":thumbs_up:"));
    applyEvent(st, react("reaction.added", ME, ":tada:"));
    expect(threadMessages(st, TH)[0]!.reactions).toEqual([
      { reaction: ":thumbs_up:", count: 2, me: true },
      { reaction: ":tada:", count: 1, me: true },
    ]);
    applyEvent(st, react("reaction.removed", ME, ":thumbs_up:"));
    applyEvent(st, react("reaction.removed", ME, ":tada:"));
    expect(threadMessages(st, TH)[0]!.reactions).toEqual([{ reaction: ":thumbs_up:", count: 1, me: false }]);
    applyEvent(st, msg("message.edited", M1, 1));
    expect(threadMessages(st, TH)[0]!.reactions).toEqual([{ reaction: ":thumbs_up:", count: 1, me: false }]);
    applyEvent(st, ev("message.deleted", { message_id: M1, thread_id: TH, channel_id: CH, seq: 1, redacted_at: T }));
    expect(threadMessages(st, TH)[0]!.reactions).toEqual([]);
  });

  it("skips a redacted create (only ids) until its delete", () => {
    const st = fromSnapshot(snap(100));
    applyEvent(st, ev("message.created", { message_id: M1, thread_id: TH, channel_id: CH, author_id: ALEX }, { redacted: true }));
    expect(threadMessages(st, TH)).toEqual([]);
    expect(st.cursor).toBe(seq);
  });

  it("older versions never overwrite newer ones", () => {
    const st = fromSnapshot(snap(100, { settings: [{ key: "theme", value: "dark", version: 3 }] }));
    applyEvent(st, ev("setting.updated", { key: "theme", value: "light", version: 2 }));
    applyEvent(st, ev("channel.updated", { channel_id: CH, name: "old", version: 1 }));
    expect(st.settings.theme!.value).toBe("dark");
    expect(st.channels[CH]!.name).toBe("tickets");
  });

  it("asks for a structure refresh on a newer permission version only", () => {
    const st = fromSnapshot(snap(100));
    expect(applyEvent(st, ev("permissions.changed", { principal_id: ME, permission_version: 1 })).refreshStructure).toBe(false);
    expect(applyEvent(st, ev("permissions.changed", { principal_id: ME, permission_version: 2 })).refreshStructure).toBe(true);
  });

  it("names a snapshot's mentions from the listed messages, and asks again when marked unread", () => {
    const st = fromSnapshot(snap(100, { unread_threads: [unread(2, 0, 1)] }));
    expect(storeView(st).unread[TH]!.mention_count).toBe(1);
    expect(st.threads[TH]!.base_mentions).toBe(1);
    hydrateMentions(st, TH, [
      { id: M1, thread_id: TH, channel_id: CH, seq: 1, author_id: ALEX, content_md: "a", mention_ids: [], created_at: T, redacted: false, reactions: [] },
      { id: M2, thread_id: TH, channel_id: CH, seq: 2, author_id: ALEX, content_md: "@sam", mention_ids: [ME], created_at: T, redacted: false, reactions: [] },
    ]);
    expect(st.threads[TH]!.base_mentions).toBe(0);
    expect(storeView(st).unread[TH]!.mention_count).toBe(1);
    applyEvent(st, ev("read_state.updated", { thread_id: TH, channel_id: CH, last_read_seq: 2, version: 1 }));
    expect(storeView(st).unread[TH]).toBeUndefined();
    const fx = applyEvent(st, ev("read_state.updated", { thread_id: TH, channel_id: CH, last_read_seq: 0, version: 2 }));
    expect([...fx.hydrate]).toEqual([TH]);
  });

  it("merges a later snapshot's structure and keeps the messages of threads still visible", () => {
    const st = fromSnapshot(snap(100));
    applyEvent(st, msg("message.created", M1, 1));
    applyEvent(st, msg("message.created", M2, 1, [], TH2));
    st.threads[TH2]!.channel_id = CH2; // TH2 lies in a channel the next snapshot no longer has
    const s = snap(150, { permission_version: 3, unread_threads: [unread(1, 0, 0)] });
    mergeStructure(st, s);
    expect(st.cursor).toBe(seq); // the cursor is kept
    expect(st.permission_version).toBe(3);
    expect(threadMessages(st, TH).map((m) => m.id)).toEqual([M1]);
    expect(st.threads[TH2]).toBeUndefined();
  });
});
