// The message composer of a thread. Enter sends, Shift+Enter starts a new line. What is typed
// is saved as the thread's draft on the server (saveDraft, a moment after the last key), so it
// survives a reload, another device, or going offline; sending deletes the draft. Saves and
// deletes run one after another, so a late save never brings back a sent draft.
// Typing `@` and the start of a name lists the people whose handle or name starts with it
// (listPrincipals with prefix) in a listbox under the textarea, which keeps the focus and points
// at the active option (aria-activedescendant): arrows move, Enter or Tab insert `@handle`,
// Escape closes; a click inserts too.
import { useEffect, useRef, useState } from "preact/hooks";
import type { Session } from "./session.js";
import type { Person } from "./directory.js";
import { Avatar } from "./people.js";

/** How long after the last key the people matching a mention are asked for. */
const MENTION_DELAY_MS = 120;

/** The mention being typed before the caret: where its `@` is and what follows it. */
export function mentionAt(text: string, caret: number): { start: number; prefix: string } | null {
  const m = text.slice(0, caret).match(/(^|[\s(])@([\p{L}\p{N}_.-]{0,32})$/u);
  if (!m) return null;
  return { start: caret - m[2]!.length - 1, prefix: m[2]! };
}

/** How long after the last key a draft is saved. */
const DRAFT_DELAY_MS = 500;

/**
 * The composer of a thread: initial is the draft to start from (the store's, or getDraft's);
 * drafts go through engine.saveDraft and engine.deleteDraft, posts through engine.postMessage.
 */
export function Composer({ session, channelId, threadId, initial }: { session: Session; channelId: string; threadId: string; initial: string }) {
  const [text, setText] = useState(initial);
  const [error, setError] = useState("");
  const timer = useRef<ReturnType<typeof setTimeout>>();
  const queue = useRef<Promise<unknown>>(Promise.resolve());
  const saved = useRef(initial);
  const box = useRef<HTMLTextAreaElement>(null);
  const engine = session.engine;
  const [mention, setMention] = useState<{ start: number; prefix: string } | null>(null);
  const [people, setPeople] = useState<Person[]>([]);
  const [active, setActive] = useState(0);
  const lookup = useRef<{ timer?: ReturnType<typeof setTimeout>; abort?: AbortController }>({});

  // The people matching the mention being typed, asked a moment after the last key.
  useEffect(() => {
    const l = lookup.current;
    clearTimeout(l.timer);
    l.abort?.abort();
    if (!mention) {
      setPeople([]);
      return;
    }
    l.timer = setTimeout(() => {
      const abort = new AbortController();
      l.abort = abort;
      session.people
        .search(mention.prefix, abort.signal)
        .then((found) => {
          if (abort.signal.aborted) return;
          setPeople(found.filter((p) => p.id !== session.me.id && p.handle));
          setActive(0);
        })
        .catch(() => undefined); // no suggestions; typing goes on
    }, MENTION_DELAY_MS);
  }, [mention?.start, mention?.prefix]);
  const open = mention !== null && people.length > 0;
  const follow = (el: HTMLTextAreaElement) => setMention(mentionAt(el.value, el.selectionStart));
  const insert = (p: Person) => {
    const el = box.current;
    if (!el || !mention || !p.handle) return;
    const caret = el.selectionStart;
    const value = `${text.slice(0, mention.start)}@${p.handle} ${text.slice(caret)}`;
    const at = mention.start + p.handle.length + 2;
    // The textarea gets the text and the caret now, not at the next frame: keys typed right
    // after the insert must land after `@handle `, and a frame can come after them.
    el.value = value;
    el.setSelectionRange(at, at);
    el.focus();
    setText(value);
    setMention(null);
    setPeople([]);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => saveDraft(value), DRAFT_DELAY_MS);
  };

  // A draft that arrives after mount (the store learnt it late, or getDraft answered) fills
  // the composer only while nothing was typed in it, so it never overwrites what is typed.
  const touched = useRef(false);
  useEffect(() => {
    if (!touched.current && !box.current?.value && initial && saved.current === "") {
      setText(initial);
      saved.current = initial;
    }
  }, [initial]);

  const enqueue = (f: () => Promise<unknown>) => {
    queue.current = queue.current.then(f).catch(() => undefined);
  };
  const saveDraft = (value: string) => {
    if (value === saved.current) return;
    saved.current = value;
    if (value.trim()) {
      enqueue(() => engine.saveDraft(channelId, value, threadId));
    } else {
      enqueue(() => engine.deleteDraft(channelId, threadId));
    }
  };

  // Leaving the thread saves what is typed at once.
  useEffect(
    () => () => {
      clearTimeout(timer.current);
      if (box.current) saveDraft(box.current.value);
    },
    [],
  );

  const send = async () => {
    const value = text.trim();
    if (!value) return;
    clearTimeout(timer.current);
    setText("");
    setError("");
    setMention(null);
    saveDraft("");
    try {
      await engine.postMessage(threadId, value);
    } catch (err) {
      setError(`Not sent: ${(err as Error).message}. It is kept above; try again.`);
    }
  };

  return (
    <form
      class="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <label for="composer" class="sr-only">
        Message
      </label>
      <textarea
        id="composer"
        ref={box}
        rows={2}
        placeholder="Write a message (Enter sends, Shift+Enter for a new line)"
        value={text}
        aria-autocomplete="list"
        aria-controls={open ? "mention-list" : undefined}
        aria-activedescendant={open ? `mention-${people[active]?.id}` : undefined}
        onInput={(e) => {
          const v = e.currentTarget.value;
          touched.current = true;
          setText(v);
          follow(e.currentTarget);
          clearTimeout(timer.current);
          timer.current = setTimeout(() => saveDraft(v), DRAFT_DELAY_MS);
        }}
        onClick={(e) => follow(e.currentTarget)}
        onKeyUp={(e) => (e.key === "ArrowLeft" || e.key === "ArrowRight" || e.key === "Home" || e.key === "End") && follow(e.currentTarget)}
        onBlur={() => setMention(null)}
        onKeyDown={(e) => {
          if (open && !e.isComposing) {
            if (e.key === "ArrowDown" || e.key === "ArrowUp") {
              e.preventDefault();
              const n = people.length;
              setActive((a) => (a + (e.key === "ArrowDown" ? 1 : n - 1)) % n);
              return;
            }
            if (e.key === "Enter" || e.key === "Tab") {
              e.preventDefault();
              insert(people[active]!);
              return;
            }
            if (e.key === "Escape") {
              e.preventDefault();
              e.stopPropagation();
              setMention(null);
              return;
            }
          }
          if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            void send();
          }
        }}
      />
      {open && (
        <ul id="mention-list" class="mentions" role="listbox" aria-label="People to mention">
          {people.map((p, i) => (
            <li
              key={p.id}
              id={`mention-${p.id}`}
              role="option"
              aria-selected={i === active}
              class={i === active ? "active" : undefined}
              onMouseDown={(e) => {
                e.preventDefault(); // the textarea keeps the focus
                insert(p);
              }}
            >
              <Avatar session={session} id={p.id} small />
              <span class="name">{p.display_name}</span> <span class="handle">@{p.handle}</span>
            </li>
          ))}
        </ul>
      )}
      <button type="submit" disabled={!text.trim()}>
        Send
      </button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
