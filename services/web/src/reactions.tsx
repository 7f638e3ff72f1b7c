// A message's reactions: one toggle button per reaction with its count (pressed when the reader
// made it), and "Add reaction", which opens a small picker. Adding is engine.addReaction, taking
// back engine.removeReaction (each retried under the SDK's rules); what is shown comes from the
// store, which the reaction.added and reaction.removed events keep current for every reader.
import { useEffect, useRef, useState } from "preact/hooks";
import type { Message } from "@bothy/client";
import type { Session } from "./session.js";

/** The picker's reactions and their spoken names. */
export const CHOICES: [string, string][] = [
  ["👍", "thumbs up"],
  ["❤️", "heart"],
  ["😄", "smile"],
  ["🎉", "party"],
  ["👀", "eyes"],
  ["✅", "done"],
];
const NAMES = new Map(CHOICES);

/** A reaction's spoken name: the picker's, or the shortcode without its colons. */
export function reactionName(r: string): string {
  return NAMES.get(r) ?? r.replace(/^:(.*):$/, "$1").replace(/_/g, " ");
}

/** A message's reactions and the picker; each button adds or takes back the reader's own. */
export function Reactions({ m, session }: { m: Message; session: Session }) {
  const [picking, setPicking] = useState(false);
  const [busy, setBusy] = useState("");
  const [error, setError] = useState("");
  const picker = useRef<HTMLDivElement>(null);
  const addButton = useRef<HTMLButtonElement>(null);
  const wasPicking = useRef(false);
  useEffect(() => {
    if (picking) picker.current?.querySelector("button")?.focus();
    else if (wasPicking.current) addButton.current?.focus();
    wasPicking.current = picking;
  }, [picking]);

  const toggle = async (reaction: string, mine: boolean) => {
    if (busy) return;
    setBusy(reaction);
    setError("");
    try {
      await (mine ? session.engine.removeReaction(m.id, reaction) : session.engine.addReaction(m.id, reaction));
    } catch (err) {
      setError(`Could not ${mine ? "remove" : "add"} the reaction: ${(err as Error).message}`);
    } finally {
      setBusy("");
    }
  };

  return (
    <div
      class="reactions"
      role="group"
      aria-label="Reactions"
      onKeyDown={(e) => {
        // Escape closes an open picker wherever the focus is in the group: on a choice, or
        // still on "Add reaction" when it is pressed before the picker took the focus.
        if (e.key === "Escape" && picking) {
          e.stopPropagation();
          setPicking(false);
        }
      }}
    >
      {m.reactions.map((r) => (
        <button
          type="button"
          key={r.reaction}
          class={r.me ? "reaction pressed" : "reaction"}
          aria-pressed={r.me}
          disabled={busy === r.reaction}
          data-reaction={r.reaction}
          aria-label={`${reactionName(r.reaction)}: ${r.count}${r.me ? ", including you" : ""}`}
          onClick={() => void toggle(r.reaction, r.me)}
        >
          <span aria-hidden="true">{r.reaction}</span> <span class="count">{r.count}</span>
        </button>
      ))}
      <button type="button" ref={addButton} class="reaction add" aria-expanded={picking} aria-label="Add reaction" onClick={() => setPicking(!picking)}>
        <span aria-hidden="true">☺+</span>
      </button>
      {picking && (
        <div
          class="picker"
          ref={picker}
          role="group"
          aria-label="Pick a reaction"
        >
          {CHOICES.map(([r, name]) => {
            const mine = m.reactions.some((x) => x.reaction === r && x.me);
            return (
              <button
                type="button"
                key={r}
                aria-label={mine ? `${name} (yours; remove)` : name}
                onClick={() => {
                  setPicking(false);
                  void toggle(r, mine);
                }}
              >
                {r}
              </button>
            );
          })}
        </div>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
