// Reading each event type's payload as a client does: narrowed by `type`, then by `redacted`,
// with no cast. A type the document adds without a case here fails to compile (the `never`
// check), so this file keeps up with the event type register.

import type { components } from "../gen/schema.js";

type Event = components["schemas"]["Event"];

/** summary reads one member of each event's payload, whole or redacted. */
export function summary(ev: Event): string {
  if (ev.redacted === true) {
    return `${ev.type} (redacted)`;
  }
  switch (ev.type) {
    case "space.created":
      return `space ${ev.payload.name}`;
    case "space.updated":
      return `space ${ev.payload.space_id} v${ev.payload.version}`;
    case "space.archived":
      return `space archived at ${ev.payload.archived_at}`;
    case "channel.created":
      return `channel of kind ${ev.payload.kind}`;
    case "channel.updated":
      return `channel ${ev.payload.channel_id} v${ev.payload.version}`;
    case "channel.archived":
      return `channel archived at ${ev.payload.archived_at}`;
    case "thread.created":
      return `thread by ${ev.payload.created_by}`;
    case "thread.updated":
      return `thread ${ev.payload.thread_id} v${ev.payload.version}`;
    case "message.created":
      return `message ${ev.payload.seq}: ${ev.payload.content_md}`;
    case "message.edited":
      return `edited at ${ev.payload.edited_at}: ${ev.payload.content_md}`;
    case "message.deleted":
      return `deleted at ${ev.payload.redacted_at}`;
    case "reaction.added":
      return `${ev.payload.reaction} added by ${ev.payload.principal_id}`;
    case "reaction.removed":
      return `${ev.payload.reaction} taken back by ${ev.payload.principal_id}`;
    case "agent.created":
      return `agent @${ev.payload.handle}`;
    case "agent.updated":
      return `agent ${ev.payload.agent_id}`;
    case "agent.presence_changed":
      return `agent ${ev.payload.agent_id} ${ev.payload.state}`;
    case "run.created":
      return `run ${ev.payload.state}: ${ev.payload.progress}`;
    case "run.updated":
      return `run ${ev.payload.state}: ${ev.payload.progress}`;
    case "invocation.requested":
      return `invocation ${ev.payload.id} attempt ${ev.payload.attempt}${ev.redelivered === true ? " (redelivered)" : ""}`;
    case "invocation.failed":
      return `invocation ${ev.payload.id} failed after ${ev.payload.attempt}`;
    case "principal.deactivated":
      return `deactivated at ${ev.payload.deactivated_at}`;
    case "principal.reactivated":
      return `reactivated ${ev.payload.principal_id}`;
    case "grant.created":
      return `grant of ${ev.payload.role} on ${ev.payload.resource_kind}`;
    case "grant.revoked":
      return `grant of ${ev.payload.role} revoked`;
    case "permissions.changed":
      return `permissions v${ev.payload.permission_version}`;
    case "token.revoked":
      return `token revoked at ${ev.payload.revoked_at}`;
    case "read_state.updated":
      return `read to ${ev.payload.last_read_seq}`;
    case "draft.saved":
      return `draft: ${ev.payload.content_md}`;
    case "draft.deleted":
      return `draft deleted v${ev.payload.version}`;
    case "setting.updated":
      return `setting ${ev.payload.key}`;
    case "sidebar.updated":
      return `sidebar of ${ev.payload.sections.length} sections`;
    case "flags.updated":
      return `flags ${ev.payload.keys.join(", ")}`;
    default: {
      const unknown: never = ev;
      return `unknown ${String(unknown)}`;
    }
  }
}
