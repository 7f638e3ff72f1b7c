// The message composer of a thread. Enter sends, Shift+Enter starts a new line. What is typed
// is saved as the thread's draft on the server (saveDraft, a moment after the last key), so it
// survives a reload, another device, or going offline; sending deletes the draft. Saves and
// deletes run one after another, so a late save never brings back a sent draft.
// TODO(mentions): autocomplete @handles from listPrincipals once it lands.
import { useEffect, useRef, useState } from "preact/hooks";
import type { Session } from "./session.js";

/** How long after the last key a draft is saved. */
const DRAFT_DELAY_MS = 500;

export function Composer({ session, channelId, threadId, initial }: { session: Session; channelId: string; threadId: string; initial: string }) {
  const [text, setText] = useState(initial);
  const [error, setError] = useState("");
  const timer = useRef<ReturnType<typeof setTimeout>>();
  const queue = useRef<Promise<unknown>>(Promise.resolve());
  const saved = useRef(initial);
  const box = useRef<HTMLTextAreaElement>(null);
  const engine = session.engine;

  // A draft that arrives after mount (the store learnt it late) fills an untouched composer.
  useEffect(() => {
    if (!text && initial && saved.current === "") {
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
      enqueue(() =>
        engine.write(() =>
          engine.rest.PUT("/api/v1/channels/{channel_id}/draft", { params: { path: { channel_id: channelId } }, body: { content_md: value, thread_id: threadId } }),
        ),
      );
    } else {
      enqueue(() =>
        engine.write(() => engine.rest.DELETE("/api/v1/channels/{channel_id}/draft", { params: { path: { channel_id: channelId }, query: { thread_id: threadId } } })),
      );
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
        onInput={(e) => {
          const v = e.currentTarget.value;
          setText(v);
          clearTimeout(timer.current);
          timer.current = setTimeout(() => saveDraft(v), DRAFT_DELAY_MS);
        }}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            void send();
          }
        }}
      />
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
