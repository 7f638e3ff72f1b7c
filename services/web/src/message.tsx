// One message of a thread: author, time, text, reactions, and for the reader's own messages
// Edit (engine.editMessage) and Delete (engine.deleteMessage, confirmed first); and one post
// still being sent (or failed, with "Try again").
import { useEffect, useRef, useState } from "preact/hooks";
import type { Message, PendingMessage } from "@bothy/client";
import type { Session } from "./session.js";
import { Avatar } from "./people.js";
import { Reactions } from "./reactions.js";

/** A message's time, short and in the reader's locale. */
function time(iso: string): string {
  const d = new Date(iso);
  return d.toLocaleString(undefined, { hour: "2-digit", minute: "2-digit", month: "short", day: "numeric" });
}

/** A message; mine shows Edit and Delete, target marks the message a search hit opened. */
export function MessageItem({ m, session, mine, target }: { m: Message; session: Session; mine: boolean; target: boolean }) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(m.content_md);
  const [confirm, setConfirm] = useState(false);
  const [error, setError] = useState("");
  const editBox = useRef<HTMLTextAreaElement>(null);
  const editButton = useRef<HTMLButtonElement>(null);
  const wasEditing = useRef(false);
  useEffect(() => {
    // Into the edit box on Edit; back to the Edit button on Save or Cancel.
    if (editing) editBox.current?.focus();
    else if (wasEditing.current) editButton.current?.focus();
    wasEditing.current = editing;
  }, [editing]);

  if (m.redacted) {
    return (
      <li class="message redacted" data-seq={m.seq} data-id={m.id}>
        <span class="muted">Message deleted</span>
      </li>
    );
  }
  const save = async () => {
    setError("");
    try {
      await session.engine.editMessage(m.id, draft);
      setEditing(false);
    } catch (err) {
      setError(`Could not save: ${(err as Error).message}`);
    }
  };
  const remove = async () => {
    setError("");
    try {
      await session.engine.deleteMessage(m.id);
    } catch (err) {
      setError(`Could not delete: ${(err as Error).message}`);
      setConfirm(false);
    }
  };
  return (
    <li class={`message${mine ? " mine" : ""}${target ? " target" : ""}`} data-seq={m.seq} data-id={m.id} tabIndex={target ? -1 : undefined}>
      <div class="meta">
        <Avatar session={session} id={m.author_id} />
        <strong class="author">{session.name(m.author_id)}</strong>
        <time dateTime={m.created_at}>{time(m.created_at)}</time>
        {m.edited_at && <span class="muted">(edited)</span>}
      </div>
      {editing ? (
        <form
          class="edit"
          onSubmit={(e) => (e.preventDefault(), void save())}
          onKeyDown={(e) => {
            if (e.key === "Escape") {
              setEditing(false);
              setDraft(m.content_md);
            } else if (e.key === "Enter" && !e.shiftKey) {
              e.preventDefault();
              void save();
            }
          }}
        >
          <label class="sr-only" for={`edit-${m.id}`}>
            Edit message
          </label>
          <textarea id={`edit-${m.id}`} ref={editBox} rows={2} value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
          <div class="row">
            <button type="submit">Save</button>
            <button type="button" class="secondary" onClick={() => (setEditing(false), setDraft(m.content_md))}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <p class="text">{m.content_md}</p>
      )}
      {!editing && <Reactions m={m} session={session} />}
      {mine && !editing && (
        <div class="actions">
          <button type="button" class="link" ref={editButton} onClick={() => (setDraft(m.content_md), setEditing(true))} aria-label="Edit this message">
            Edit
          </button>
          {confirm ? (
            <>
              <button type="button" class="link danger" onClick={() => void remove()} aria-label="Really delete this message">
                Delete for everyone
              </button>
              <button type="button" class="link" onClick={() => setConfirm(false)}>
                Keep
              </button>
            </>
          ) : (
            <button type="button" class="link" onClick={() => setConfirm(true)} aria-label="Delete this message">
              Delete
            </button>
          )}
        </div>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </li>
  );
}

/** A post of the reader's not yet confirmed: "sending", or "not sent" with "Try again". */
export function PendingItem({ p, session }: { p: PendingMessage; session: Session }) {
  return (
    <li class="message mine pending" data-state={p.state}>
      <div class="meta">
        <Avatar session={session} id={session.me.id} />
        <strong class="author">{session.me.display_name}</strong>
        <span class="muted">{p.state === "failed" ? "not sent" : "sending"}</span>
      </div>
      <p class="text">{p.content_md}</p>
      {p.state === "failed" && (
        <div class="actions">
          <button type="button" class="link" onClick={() => session.engine.resend(p.local_id).catch(() => undefined)}>
            Try again
          </button>
        </div>
      )}
    </li>
  );
}
