// Typed events: the envelope comes from api/openapi.yaml (generated), the payload of each type
// from the event type register (services/server/internal/sync/domain/eventtypes.go, spec 02).
//
// Where new types go: add a member to EventPayloads (the type name and its payload, as the
// register has it), then a case to the reducer in store.ts. Once api/openapi.yaml carries a
// schema per event type, replace these hand-written payloads by the generated ones; the
// reducers keep their shape.
import type { components } from "./gen/openapi.js";

/** The schemas of api/openapi.yaml, as openapi-typescript generates them. */
export type Schemas = components["schemas"];
/** The envelope of one durable event, the same on REST and the gateway (spec 03). */
export type Envelope = Schemas["Event"];
/** The snapshot a client starts from (getSnapshot, the gateway's ready frame). */
export type Snapshot = Schemas["Snapshot"];
/** One page of catch-up (listEvents). */
export type EventPage = Schemas["EventPage"];
/** The body of 410 resync_required and of the gateway's resync_required frame. */
export type ResyncBody = Schemas["GoneProblem"];

type ID = string;
type Time = string;

/** The payload of every durable event type the SDK knows, by type (the register's fields). */
export interface EventPayloads {
  "space.created": { space_id: ID; name: string; description?: string; version: number };
  "space.updated": { space_id: ID; name?: string; description?: string; version: number };
  "space.archived": { space_id: ID; archived_at: Time; version: number };
  "channel.created": {
    channel_id: ID;
    space_id?: ID;
    kind: "standard" | "dm";
    name?: string;
    topic?: string;
    participant_ids?: ID[];
    version: number;
  };
  "channel.updated": { channel_id: ID; space_id?: ID; name?: string; topic?: string; version: number };
  "channel.archived": { channel_id: ID; space_id?: ID; archived_at: Time; version: number };
  "thread.created": { thread_id: ID; channel_id: ID; title?: string; created_by: ID; version: number };
  "thread.updated": { thread_id: ID; channel_id: ID; title?: string; last_message_seq?: number; version: number };
  "message.created": {
    message_id: ID;
    thread_id: ID;
    channel_id: ID;
    author_id: ID;
    seq: number;
    content_md: string;
    mention_ids?: ID[];
    created_at: Time;
    /** The invocation the message answers (a reply posted with its token); absent for none. */
    invocation_id?: ID;
  };
  "message.edited": {
    message_id: ID;
    thread_id: ID;
    channel_id: ID;
    author_id: ID;
    seq: number;
    content_md: string;
    mention_ids?: ID[];
    edited_at: Time;
  };
  "message.deleted": {
    message_id: ID;
    thread_id: ID;
    channel_id: ID;
    author_id?: ID;
    seq: number;
    redacted_at: Time;
  };
  "reaction.added": { message_id: ID; thread_id: ID; channel_id: ID; principal_id: ID; reaction: string };
  "reaction.removed": { message_id: ID; thread_id: ID; channel_id: ID; principal_id: ID; reaction: string };
  "run.created": Schemas["RunCreatedPayload"];
  "run.updated": Schemas["RunUpdatedPayload"];
  "agent.presence_changed": Schemas["AgentPresenceChangedPayload"];
  "agent.created": { agent_id: ID; display_name: string; handle: string; description?: string; created_by?: ID };
  "agent.updated": { agent_id: ID; display_name?: string; handle?: string; description?: string; archived_at?: Time };
  "principal.deactivated": { principal_id: ID; deactivated_at: Time };
  "principal.reactivated": { principal_id: ID };
  "grant.created": { grant_id: ID; principal_id: ID; resource_kind: string; resource_id?: ID; role: string };
  "grant.revoked": { grant_id: ID; principal_id: ID; resource_kind: string; resource_id?: ID; role: string };
  "permissions.changed": { principal_id: ID; permission_version: number };
  "token.revoked": { principal_id: ID; token_id: ID; revoked_at: Time };
  "read_state.updated": { thread_id: ID; channel_id: ID; last_read_seq: number; version: number };
  "draft.saved": { channel_id: ID; thread_id?: ID; content_md: string; version: number };
  "draft.deleted": { channel_id: ID; thread_id?: ID; version: number };
  "setting.updated": { key: string; value: unknown; version: number };
  "sidebar.updated": { sections: Schemas["SidebarSection"][]; version: number };
  "flags.updated": { keys: string[] };
}

/** A durable event type the SDK knows. */
export type EventType = keyof EventPayloads;

/** An envelope whose payload is typed by its type. A redacted event's payload holds only ids. */
export type TypedEvent<T extends EventType> = Omit<Envelope, "type" | "payload"> & {
  type: T;
  payload: EventPayloads[T];
};

/** Every known event, a union discriminated by `type`. */
export type KnownEvent = { [T in EventType]: TypedEvent<T> }[EventType];

const known: ReadonlySet<string> = new Set<EventType>([
  "space.created", "space.updated", "space.archived",
  "channel.created", "channel.updated", "channel.archived",
  "thread.created", "thread.updated",
  "message.created", "message.edited", "message.deleted",
  "reaction.added", "reaction.removed", "run.created", "run.updated",
  "agent.created", "agent.updated", "agent.presence_changed",
  "principal.deactivated", "principal.reactivated",
  "grant.created", "grant.revoked", "permissions.changed", "token.revoked",
  "read_state.updated", "draft.saved", "draft.deleted", "setting.updated", "sidebar.updated",
  "flags.updated",
]);

/** Whether the SDK knows the event's type (an unknown type is skipped, its seq still counts). */
export function isKnownEvent(e: Envelope): e is Envelope & KnownEvent {
  return known.has(e.type);
}
