// The thread pane (route #/t/<thread>): its messages (message.tsx), loaded page by page into the
// store and kept current by the engine, those still being sent, and the composer. What it
// shows counts as read while the page is visible and the engine is live.
import { useEffect, useRef, useState } from "preact/hooks";
import { call, threadMessages, draftKey, ApiError, type StoreState } from "@bothy/client";
import type { Session } from "./session.js";
import { href } from "./route.js";
import { Composer } from "./composer.js";
import { MessageItem, PendingItem } from "./message.js";
import { threadTitle } from "./threadlist.js";

/** Loads a thread's messages page by page into the store (history the events did not bring). */
async function loadThread(session: Session, threadId: string): Promise<void> {
  let after = 0;
  for (let page = 0; page < 100; page++) {
    const items = await session.engine.loadMessages(threadId, after);
    if (items.length === 0) return;
    after = Math.max(...items.map((m) => m.seq));
  }
}

/**
 * The thread pane; target is a message to scroll to and focus (a search hit), online whether
 * reading may be marked (the browser is online and the engine live).
 */
export function ThreadPane({ st, session, threadId, target, online }: { st: StoreState; session: Session; threadId: string; target?: string; online: boolean }) {
  const th = st.threads[threadId];
  const [loading, setLoading] = useState(true);
  const [loadError, setLoadError] = useState("");
  const heading = useRef<HTMLHeadingElement>(null);
  const list = useRef<HTMLOListElement>(null);

  useEffect(() => {
    setLoading(true);
    setLoadError("");
    loadThread(session, threadId)
      .catch((err) => setLoadError(`Could not load the messages: ${(err as Error).message}`))
      .finally(() => setLoading(false));
    heading.current?.focus();
  }, [threadId]);

  const messages = threadMessages(st, threadId);
  const pending = Object.values(st.pending).filter((p) => p.thread_id === threadId && !(p.id && st.messages[threadId]?.[p.id]));
  const lastSeq = th?.last_message_seq ?? 0;

  // Reading: what the open thread shows counts as read while the page is visible and the
  // engine is live. One mark at a time per thread, always the newest seq, so two marks never
  // race and leave the older one last (a read position may move back on the server).
  useEffect(() => {
    const mark = () => {
      if (!th || !online || document.visibilityState !== "visible") return;
      if (lastSeq === 0 || th.last_read_seq >= lastSeq) return;
      session.markRead(threadId, lastSeq);
    };
    mark();
    document.addEventListener("visibilitychange", mark);
    return () => document.removeEventListener("visibilitychange", mark);
  }, [threadId, lastSeq, th?.last_read_seq, online]);

  // Keep the newest message in view as messages arrive, unless the route names a message (a
  // search hit): that one is scrolled to, marked and focused once it is loaded.
  const targetShown = useRef("");
  useEffect(() => {
    if (target) {
      const el = list.current?.querySelector<HTMLElement>(`li[data-id="${target}"]`);
      if (el && targetShown.current !== target) {
        targetShown.current = target;
        el.scrollIntoView?.({ block: "center" });
        el.focus();
      }
      return;
    }
    const el = list.current?.lastElementChild;
    el?.scrollIntoView?.({ block: "nearest" });
  }, [messages.length, pending.length, target]);

  // A draft the snapshot only names (saved on another device, or before this client's
  // snapshot) is read with getDraft, so reopening the thread restores its text.
  const channelOf = th?.channel_id ?? messages[0]?.channel_id ?? session.threads.get(threadId)?.channel_id;
  const stored = channelOf ? st.drafts[draftKey(channelOf, threadId)] : undefined;
  const [fetchedDraft, setFetchedDraft] = useState<{ key: string; text: string } | null>(null);
  useEffect(() => {
    if (!channelOf || !stored || stored.content_md !== undefined) return;
    const key = draftKey(channelOf, threadId);
    call(session.engine.rest.GET("/api/v1/channels/{channel_id}/draft", { params: { path: { channel_id: channelOf }, query: { thread_id: threadId } } }))
      .then((d) => setFetchedDraft({ key, text: d.content_md }))
      .catch((err) => {
        if (!(err instanceof ApiError && err.status === 404)) setLoadError(`Could not load the draft: ${(err as Error).message}`);
      });
  }, [channelOf, threadId, stored?.version]);

  if (!th && !loading && messages.length === 0) {
    return (
      <section class="pane thread">
        <h1 ref={heading} tabIndex={-1}>Thread not found</h1>
        <p>{loadError || "You may have lost access to it."} <a href="#/">Back to the channels</a></p>
      </section>
    );
  }
  const channelId = channelOf;
  const canWrite = !!channelId;
  const draftText = channelId ? (st.drafts[draftKey(channelId, threadId)]?.content_md ?? (fetchedDraft?.key === draftKey(channelId, threadId) ? fetchedDraft.text : "")) : "";
  return (
    <section class="pane thread" aria-labelledby="thread-title">
      <div class="pane-head">
        {channelId && (
          <a class="back" href={href({ view: "channel", id: channelId })} aria-label="Back to the threads">
            ‹ Threads
          </a>
        )}
        <h1 id="thread-title" ref={heading} tabIndex={-1}>
          {threadTitle(st, session, th, threadId)}
        </h1>
      </div>
      {loading && messages.length === 0 && <p role="status">Loading messages</p>}
      {loadError && (
        <p class="error" role="alert">
          {loadError}
        </p>
      )}
      <ol class="messages" ref={list} role="log" aria-label="Messages" aria-live="polite">
        {messages.map((m) => (
          <MessageItem key={m.id} m={m} session={session} mine={m.author_id === st.principal.id} target={m.id === target} />
        ))}
        {pending.map((p) => (
          <PendingItem key={p.local_id} p={p} session={session} />
        ))}
      </ol>
      {canWrite && <Composer key={threadId} session={session} channelId={channelId} threadId={threadId} initial={draftText} />}
    </section>
  );
}
