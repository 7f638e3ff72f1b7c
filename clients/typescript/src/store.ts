// The local store: what the client saw, as plain JSON (so that a storage can persist it as it
// is), built from a snapshot and moved forward by one reducer per event type. Its view() is
// the snapshot's versions and counters computed from the store, so that "snapshot plus events
// equals a later snapshot" can be checked on the client as the server's own tests check it.
import type { Envelope, KnownEvent, Schemas, Snapshot } from "./events.js";
import { isKnownEvent } from "./events.js";

type ID = string;

/** A thread as the store knows it: its counters and the reader's position in it. */
export interface ThreadEntry {
  id: ID;
  channel_id: ID;
  space_id?: ID;
  title?: string;
  created_by?: ID;
  version: number;
  /** The seq of the thread's newest message the store knows of. */
  last_message_seq: number;
  /** The reader's read position (0 when never read). */
  last_read_seq: number;
  /** The read state's version, when a read_state.updated was seen. */
  read_version: number;
  /** Messages at or below it never count as unread (the server's unread floor, as far as a snapshot shows it). */
  floor: number;
  /** The reader's mentions the store knows by message: message id to message seq. */
  mentions: Record<ID, number>;
  /** Unread mentions a snapshot counted that the store cannot name yet (0 once hydrated). */
  base_mentions: number;
}

/** A message the store saw (an event, a list, a post's answer). */
export type Message = Schemas["Message"];

/** A message posted by this client that the server has not confirmed by its event yet. */
export interface PendingMessage {
  /** The Idempotency-Key of the post, which is also the message's local id. */
  local_id: string;
  thread_id: ID;
  content_md: string;
  /** The server's id once the post answered. */
  id?: ID;
  state: "sending" | "sent" | "failed";
  error?: string;
}

/** The whole persisted client state. */
export interface StoreState {
  format: 1;
  /** The cursor: every event up to it was applied (spec 03: the cursor is the acknowledgement). */
  cursor: number;
  epoch: string;
  /** The oldest cursor the server still served when it last said (oldest_seq). */
  oldest_seq: number;
  head_seq: number;
  permission_version: number;
  is_owner: boolean;
  principal: Schemas["PrincipalRef"];
  instance: Schemas["InstanceInfo"];
  spaces: Record<ID, Schemas["SpaceView"]>;
  channels: Record<ID, Schemas["ChannelView"]>;
  sidebar: Schemas["SidebarState"];
  threads: Record<ID, ThreadEntry>;
  /** Messages by thread, then by message id. */
  messages: Record<ID, Record<ID, Message>>;
  pending: Record<string, PendingMessage>;
  settings: Record<string, Schemas["UserSetting"]>;
  /** Drafts by draftKey(channel, thread); content_md once a draft.saved was seen. */
  drafts: Record<string, Schemas["DraftRef"] & { content_md?: string }>;
  agents: Record<ID, Schemas["AgentPresence"]>;
  features: Schemas["EvaluatedFlag"][];
  active_runs: Schemas["RunSummary"][];
  /**
   * Work the reducers asked for that the engine has not done yet, kept with the state so that
   * a failure (or a restart) between an event and its work does not lose it.
   */
  todo: { refresh_structure: boolean; hydrate: ID[] };
}

/** What applying events asks of the engine, beyond the store itself. */
export interface Effects {
  /** The actor's permissions changed: reload the structure from a snapshot (mergeStructure). */
  refreshStructure: boolean;
  /** Threads whose unread mentions must be named by listing their messages (hydrateMentions). */
  hydrate: Set<ID>;
}

/** The key of a draft in StoreState.drafts. */
export function draftKey(channel: ID, thread?: ID): string {
  return thread ? `${channel}/${thread}` : channel;
}

/** A store started from a snapshot: cursor at its head_seq, under its sync_epoch. */
export function fromSnapshot(s: Snapshot): StoreState {
  const st: StoreState = {
    format: 1,
    cursor: s.head_seq,
    epoch: s.sync_epoch,
    oldest_seq: 0,
    head_seq: s.head_seq,
    permission_version: s.permission_version,
    is_owner: s.is_owner,
    principal: s.principal,
    instance: s.instance,
    spaces: {},
    channels: {},
    sidebar: s.sidebar,
    threads: {},
    messages: {},
    pending: {},
    settings: {},
    drafts: {},
    agents: {},
    features: s.features,
    active_runs: s.active_runs,
    todo: { refresh_structure: false, hydrate: [] },
  };
  mergeStructure(st, s);
  return st;
}

/**
 * Replaces the snapshot's parts of the store by those of s, keeping the cursor, the messages
 * and what the store knows of threads the snapshot confirms. The engine calls it after
 * permissions.changed (a grant may show or hide whole spaces) and then goes on applying events
 * from its own cursor: events up to s.head_seq arrive again and are applied idempotently, by
 * version and by id. Returns the threads whose mentions need hydrating.
 */
export function mergeStructure(st: StoreState, s: Snapshot): Set<ID> {
  st.permission_version = Math.max(st.permission_version, s.permission_version);
  st.is_owner = s.is_owner;
  st.principal = s.principal;
  st.instance = s.instance;
  st.spaces = Object.fromEntries(s.spaces.map((x) => [x.id, x]));
  st.channels = Object.fromEntries(s.channels.map((x) => [x.id, x]));
  if (s.sidebar.version >= st.sidebar.version) st.sidebar = s.sidebar;
  st.settings = Object.fromEntries(s.settings.map((x) => [x.key, x]));
  const drafts: StoreState["drafts"] = {};
  for (const d of s.drafts) {
    const k = draftKey(d.channel_id, d.thread_id);
    const old = st.drafts[k];
    drafts[k] = old && old.version === d.version ? old : d;
  }
  st.drafts = drafts;
  st.agents = Object.fromEntries(s.agents.map((a) => [a.agent.id, a]));
  st.features = s.features;
  st.active_runs = s.active_runs;
  const hydrate = new Set<ID>();
  const listed = new Map(s.unread_threads.map((u) => [u.thread_id, u]));
  for (const [id, th] of Object.entries(st.threads)) {
    if (!st.channels[th.channel_id]) {
      dropThread(st, id);
    } else if (!listed.has(id)) {
      // Not listed: nothing unread in it at the snapshot's head.
      th.last_read_seq = Math.max(th.last_read_seq, th.last_message_seq);
      th.base_mentions = 0;
      pruneMentions(th);
    }
  }
  for (const u of s.unread_threads) {
    const th = ensureThread(st, u.thread_id, u.channel_id, u.space_id);
    th.last_message_seq = Math.max(th.last_message_seq, u.last_message_seq);
    th.last_read_seq = u.last_read_seq;
    const effective = u.last_message_seq - u.unread_count;
    th.floor = effective > u.last_read_seq ? effective : 0;
    pruneMentions(th);
    const known = mentionCount(th);
    if (u.mention_count !== known) {
      th.base_mentions = Math.max(0, u.mention_count - known);
      hydrate.add(u.thread_id);
    }
  }
  st.todo ??= { refresh_structure: false, hydrate: [] };
  for (const id of hydrate) if (!st.todo.hydrate.includes(id)) st.todo.hydrate.push(id);
  return hydrate;
}

/**
 * Names the unread mentions of a thread from its messages above the read position (listMessages),
 * replacing what a snapshot could only count; the messages are stored too.
 */
export function hydrateMentions(st: StoreState, threadId: ID, messages: Message[]): void {
  const th = st.threads[threadId];
  if (!th) return;
  const me = st.principal.id;
  const from = effectiveRead(th);
  for (const m of messages) {
    storeMessage(st, m);
    if (m.seq <= from) continue;
    th.last_message_seq = Math.max(th.last_message_seq, m.seq);
    if (!m.redacted && m.mention_ids.includes(me)) th.mentions[m.id] = m.seq;
    else delete th.mentions[m.id];
  }
  th.base_mentions = 0;
}

/** Applies one delivered event. The caller skips events at or below the cursor. */
export function applyEvent(st: StoreState, e: Envelope, fx: Effects = newEffects()): Effects {
  if (e.seq > st.cursor) st.cursor = e.seq;
  if (isKnownEvent(e)) reduce(st, e as KnownEvent, fx);
  if (fx.refreshStructure) st.todo.refresh_structure = true;
  for (const id of fx.hydrate) if (!st.todo.hydrate.includes(id)) st.todo.hydrate.push(id);
  return fx;
}

/** Empty effects. */
export function newEffects(): Effects {
  return { refreshStructure: false, hydrate: new Set() };
}

// reduce is the one switch over the event types; a new type adds its case here.
function reduce(st: StoreState, e: KnownEvent, fx: Effects): void {
  switch (e.type) {
    case "space.created":
    case "space.updated": {
      const p = e.payload;
      const old = st.spaces[p.space_id];
      if (old && old.version >= p.version) return;
      st.spaces[p.space_id] = {
        ...(old ?? { id: p.space_id, created_at: e.occurred_at, capabilities: [], name: "" }),
        ...(p.name !== undefined ? { name: p.name } : {}),
        ...(p.description !== undefined ? { description: p.description } : {}),
        version: p.version,
      };
      return;
    }
    case "space.archived": {
      const id = e.payload.space_id;
      delete st.spaces[id];
      for (const ch of Object.values(st.channels)) if (ch.space_id === id) dropChannel(st, ch.id);
      return;
    }
    case "channel.created":
    case "channel.updated": {
      const p = e.payload;
      const old = st.channels[p.channel_id];
      if (old && old.version >= p.version) return;
      const created = e.type === "channel.created" ? e.payload : undefined;
      st.channels[p.channel_id] = {
        ...(old ?? {
          id: p.channel_id,
          kind: created?.kind ?? "standard",
          participant_ids: created?.participant_ids ?? [],
          created_at: e.occurred_at,
          level: "member",
          capabilities: [],
        }),
        ...(p.space_id !== undefined ? { space_id: p.space_id } : {}),
        ...(p.name !== undefined ? { name: p.name } : {}),
        ...(p.topic !== undefined ? { topic: p.topic } : {}),
        version: p.version,
      };
      return;
    }
    case "channel.archived":
      dropChannel(st, e.payload.channel_id);
      return;
    case "thread.created":
    case "thread.updated": {
      const p = e.payload;
      const th = ensureThread(st, p.thread_id, p.channel_id, e.space_id);
      if (th.version >= p.version) return;
      th.version = p.version;
      if (p.title !== undefined) th.title = p.title;
      if (e.type === "thread.created") th.created_by = e.payload.created_by;
      if (e.type === "thread.updated" && e.payload.last_message_seq !== undefined) {
        th.last_message_seq = Math.max(th.last_message_seq, e.payload.last_message_seq);
      }
      return;
    }
    case "message.created":
    case "message.edited": {
      const p = e.payload;
      if (e.redacted) {
        // Only ids: the message was deleted since; its message.deleted (not redacted) follows.
        return;
      }
      const known = st.threads[p.thread_id] !== undefined;
      const th = ensureThread(st, p.thread_id, p.channel_id, e.space_id);
      if (!known && e.type === "message.created" && p.seq > 1) {
        // A thread the store did not list had nothing unread: read up to the message before.
        th.last_read_seq = p.seq - 1;
      }
      th.last_message_seq = Math.max(th.last_message_seq, p.seq);
      if ((p.mention_ids ?? []).includes(st.principal.id)) th.mentions[p.message_id] = p.seq;
      else delete th.mentions[p.message_id];
      const old = st.messages[p.thread_id]?.[p.message_id];
      const msg: Message = {
        id: p.message_id,
        thread_id: p.thread_id,
        channel_id: p.channel_id,
        ...(e.space_id ? { space_id: e.space_id } : {}),
        seq: p.seq,
        author_id: p.author_id,
        content_md: p.content_md,
        mention_ids: p.mention_ids ?? [],
        created_at: e.type === "message.created" ? e.payload.created_at : (old?.created_at ?? e.occurred_at),
        redacted: false,
        reactions: old?.reactions ?? [],
      };
      // The invocation a reply answers is in its message.created and every read; an edit keeps it.
      const invocation = e.type === "message.created" ? e.payload.invocation_id : old?.invocation_id;
      if (invocation) msg.invocation_id = invocation;
      if (e.type === "message.edited") msg.edited_at = e.payload.edited_at;
      if (old?.redacted) return; // a delete already seen wins over a replayed create or edit
      storeMessage(st, msg);
      reconcilePending(st, msg.id);
      return;
    }
    case "message.deleted": {
      const p = e.payload;
      const th = ensureThread(st, p.thread_id, p.channel_id, e.space_id);
      th.last_message_seq = Math.max(th.last_message_seq, p.seq);
      delete th.mentions[p.message_id];
      const old = st.messages[p.thread_id]?.[p.message_id];
      storeMessage(st, {
        id: p.message_id,
        thread_id: p.thread_id,
        channel_id: p.channel_id,
        ...(e.space_id ? { space_id: e.space_id } : {}),
        seq: p.seq,
        author_id: p.author_id ?? old?.author_id ?? e.actor.id,
        content_md: "",
        mention_ids: [],
        created_at: old?.created_at ?? e.occurred_at,
        redacted: true,
        redacted_at: p.redacted_at,
        reactions: [],
      });
      reconcilePending(st, p.message_id);
      return;
    }
    case "read_state.updated": {
      const p = e.payload;
      const th = ensureThread(st, p.thread_id, p.channel_id, e.space_id);
      const before = th.last_read_seq;
      th.last_read_seq = p.last_read_seq;
      th.read_version = Math.max(th.read_version, p.version);
      if (p.last_read_seq >= th.last_message_seq) th.base_mentions = 0;
      if (p.last_read_seq < before) {
        // Marked unread: mentions below the old position count again; name them anew.
        fx.hydrate.add(p.thread_id);
      } else if (th.base_mentions > 0) {
        fx.hydrate.add(p.thread_id);
      }
      pruneMentions(th);
      return;
    }
    case "draft.saved": {
      const p = e.payload;
      const k = draftKey(p.channel_id, p.thread_id);
      const old = st.drafts[k];
      if (old && old.version > p.version) return;
      st.drafts[k] = {
        channel_id: p.channel_id,
        ...(p.thread_id ? { thread_id: p.thread_id } : {}),
        version: p.version,
        content_md: p.content_md,
      };
      return;
    }
    case "draft.deleted": {
      const p = e.payload;
      const k = draftKey(p.channel_id, p.thread_id);
      const old = st.drafts[k];
      if (old && old.version > p.version) return;
      delete st.drafts[k];
      return;
    }
    case "setting.updated": {
      const p = e.payload;
      const old = st.settings[p.key];
      if (old && old.version >= p.version) return;
      st.settings[p.key] = { key: p.key, value: p.value as Schemas["UserSetting"]["value"], version: p.version };
      return;
    }
    case "sidebar.updated": {
      const p = e.payload;
      if (st.sidebar.version >= p.version) return;
      st.sidebar = { sections: p.sections, version: p.version };
      return;
    }
    case "permissions.changed":
      if (e.payload.permission_version > st.permission_version) {
        st.permission_version = e.payload.permission_version;
        fx.refreshStructure = true;
      }
      return;
    case "agent.created": {
      const p = e.payload;
      st.agents[p.agent_id] = {
        agent: { id: p.agent_id, kind: "agent", display_name: p.display_name, handle: p.handle },
        state: st.agents[p.agent_id]?.state ?? "unknown",
      };
      return;
    }
    case "agent.updated": {
      const p = e.payload;
      const old = st.agents[p.agent_id];
      if (p.archived_at !== undefined) {
        delete st.agents[p.agent_id];
      } else if (old) {
        if (p.display_name !== undefined) old.agent.display_name = p.display_name;
        if (p.handle !== undefined) old.agent.handle = p.handle;
      }
      return;
    }
    case "reaction.added":
    case "reaction.removed": {
      if (e.redacted) return; // its message was deleted since, with its reactions
      const p = e.payload;
      const msg = st.messages[p.thread_id]?.[p.message_id];
      if (msg === undefined || msg.redacted) return; // not loaded: the next page read carries it
      const mine = p.principal_id === st.principal.id;
      const list = msg.reactions.map((x) => ({ ...x }));
      const at = list.findIndex((x) => x.reaction === p.reaction);
      if (e.type === "reaction.added") {
        if (at < 0) list.push({ reaction: p.reaction, count: 1, me: mine });
        else if (!(mine && list[at]!.me)) list[at] = { ...list[at]!, count: list[at]!.count + 1, me: list[at]!.me || mine };
      } else if (at >= 0 && !(mine && !list[at]!.me)) {
        const left = list[at]!.count - 1;
        if (left <= 0) list.splice(at, 1);
        else list[at] = { ...list[at]!, count: left, me: list[at]!.me && !mine };
      }
      storeMessage(st, { ...msg, reactions: list });
      return;
    }
    case "run.created":
    case "run.updated":
    case "agent.presence_changed":
      // Runs and presence are shown from the snapshot's active_runs and agents; the store
      // keeps neither yet (the next snapshot carries them).
      return;
    case "grant.created":
    case "grant.revoked":
    case "principal.deactivated":
    case "principal.reactivated":
    case "token.revoked":
    case "flags.updated":
      // Grants change what is visible: their permissions.changed reloads the structure.
      // Principals, tokens and flags have no part in the store yet (flags are evaluated per
      // reader: the next snapshot carries them).
      return;
    default: {
      const never: never = e;
      return never;
    }
  }
}

function ensureThread(st: StoreState, id: ID, channel: ID, space?: ID): ThreadEntry {
  let th = st.threads[id];
  if (!th) {
    th = {
      id,
      channel_id: channel,
      ...(space ? { space_id: space } : {}),
      version: 0,
      last_message_seq: 0,
      last_read_seq: 0,
      read_version: 0,
      floor: 0,
      mentions: {},
      base_mentions: 0,
    };
    st.threads[id] = th;
  }
  return th;
}

function storeMessage(st: StoreState, m: Message): void {
  (st.messages[m.thread_id] ??= {})[m.id] = m;
}

function reconcilePending(st: StoreState, messageId: ID): void {
  for (const [k, p] of Object.entries(st.pending)) if (p.id === messageId) delete st.pending[k];
}

function dropChannel(st: StoreState, id: ID): void {
  delete st.channels[id];
  for (const th of Object.values(st.threads)) if (th.channel_id === id) dropThread(st, th.id);
}

function dropThread(st: StoreState, id: ID): void {
  delete st.threads[id];
  delete st.messages[id];
}

function effectiveRead(th: ThreadEntry): number {
  return Math.max(th.last_read_seq, th.floor);
}

function pruneMentions(th: ThreadEntry): void {
  const from = effectiveRead(th);
  for (const [id, seq] of Object.entries(th.mentions)) if (seq <= from) delete th.mentions[id];
}

function mentionCount(th: ThreadEntry): number {
  const from = effectiveRead(th);
  return Object.values(th.mentions).filter((s) => s > from).length;
}

/** The unread counters of one thread, as the snapshot's unread_threads has them. */
export function unreadOf(th: ThreadEntry): Schemas["UnreadThread"] {
  const eff = effectiveRead(th);
  return {
    thread_id: th.id,
    channel_id: th.channel_id,
    ...(th.space_id ? { space_id: th.space_id } : {}),
    last_message_seq: th.last_message_seq,
    last_read_seq: th.last_read_seq,
    unread_count: Math.max(0, th.last_message_seq - eff),
    mention_count: mentionCount(th) + th.base_mentions,
  };
}

/** The messages of a thread the store holds, by seq. */
export function threadMessages(st: StoreState, threadId: ID): Message[] {
  return Object.values(st.messages[threadId] ?? {}).sort((a, b) => a.seq - b.seq);
}

/**
 * What a store and a snapshot are compared on: head, permission version, the versions of
 * spaces, channels, settings and drafts, the sidebar (restricted to visible channels), the
 * unread threads with their counters, and the agents.
 */
export interface SyncView {
  head: number;
  permission_version: number;
  spaces: Record<ID, number>;
  channels: Record<ID, number>;
  sidebar: Schemas["SidebarState"];
  unread: Record<ID, Schemas["UnreadThread"]>;
  settings: Record<string, number>;
  drafts: Record<string, number>;
  agents: ID[];
}

/** The view of a store; equal to snapshotView of a snapshot taken at its cursor. */
export function storeView(st: StoreState): SyncView {
  const v: SyncView = {
    head: st.cursor,
    permission_version: st.permission_version,
    spaces: mapValues(st.spaces, (s) => s.version),
    channels: mapValues(st.channels, (c) => c.version),
    sidebar: {
      version: st.sidebar.version,
      sections: st.sidebar.sections.map((s) => ({ ...s, channel_ids: s.channel_ids.filter((id) => st.channels[id]) })),
    },
    unread: {},
    settings: mapValues(st.settings, (s) => s.version),
    drafts: {},
    agents: Object.keys(st.agents).sort(),
  };
  for (const th of Object.values(st.threads)) {
    if (!st.channels[th.channel_id]) continue;
    const u = unreadOf(th);
    if (u.unread_count > 0 || u.mention_count > 0) v.unread[th.id] = u;
  }
  for (const [k, d] of Object.entries(st.drafts)) if (st.channels[d.channel_id]) v.drafts[k] = d.version;
  return v;
}

/** The view of a snapshot. */
export function snapshotView(s: Snapshot): SyncView {
  return {
    head: s.head_seq,
    permission_version: s.permission_version,
    spaces: Object.fromEntries(s.spaces.map((x) => [x.id, x.version])),
    channels: Object.fromEntries(s.channels.map((x) => [x.id, x.version])),
    sidebar: s.sidebar,
    unread: Object.fromEntries(s.unread_threads.map((u) => [u.thread_id, u])),
    settings: Object.fromEntries(s.settings.map((x) => [x.key, x.version])),
    drafts: Object.fromEntries(s.drafts.map((d) => [draftKey(d.channel_id, d.thread_id), d.version])),
    agents: s.agents.map((a) => a.agent.id).sort(),
  };
}

function mapValues<T, U>(o: Record<string, T>, f: (t: T) => U): Record<string, U> {
  return Object.fromEntries(Object.entries(o).map(([k, t]) => [k, f(t)]));
}
