// The app: sign-in (signin.tsx), then a shell of three panes: the sidebar of spaces and channels
// (sidebar.tsx), a channel's threads (threadlist.tsx), a thread's messages (thread.tsx, with
// message.tsx and composer.tsx), or instead the home pane (welcome.tsx) or search results
// (search.tsx). This file keeps the shell and the routing: which panes the route shows. On a
// phone-sized screen one pane shows at a time, chosen by the route.
// Everything shown is read from the sync engine's store (engine.state), which the engine keeps
// current (snapshot, catch-up, live events, catch-up again after going offline); the app
// re-renders on engine.onChange, and when the session's directories (names, thread lists) learn
// something.
import { useCallback, useEffect, useState } from "preact/hooks";
import type { StoreState } from "@bothy/client";
import { Session, signIn, storedToken, forgetToken } from "./session.js";
import { useRoute } from "./route.js";
import { Avatar } from "./people.js";
import { SearchBox, SearchPane } from "./search.js";
import { SignIn } from "./signin.js";
import { Sidebar } from "./sidebar.js";
import { Welcome } from "./welcome.js";
import { ChannelPane } from "./threadlist.js";
import { ThreadPane } from "./thread.js";

/** Re-renders on every change of the engine (at most once a frame). */
function useEngine(s: Session): StoreState | undefined {
  const [, setTick] = useState(0);
  useEffect(() => {
    let frame = 0;
    const render = () => {
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        setTick((t) => t + 1);
      });
    };
    const off = s.engine.onChange(render);
    const offDirectory = s.onChange(render);
    return () => {
      off();
      offDirectory();
      cancelAnimationFrame(frame);
    };
  }, [s]);
  return s.engine.state;
}

/** Whether the browser believes it is online (online and offline events). */
function useOnline(): boolean {
  const [on, setOn] = useState(navigator.onLine);
  useEffect(() => {
    const up = () => setOn(true);
    const down = () => setOn(false);
    addEventListener("online", up);
    addEventListener("offline", down);
    return () => {
      removeEventListener("online", up);
      removeEventListener("offline", down);
    };
  }, []);
  return on;
}

/** The app: the sign-in page until a token is accepted (or restored), then the shell. */
export function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [restoring, setRestoring] = useState(() => storedToken() !== null);
  const [error, setError] = useState("");

  const start = useCallback(async (token: string) => {
    setError("");
    try {
      setSession(await signIn(token));
    } catch (err) {
      setError((err as Error).message);
      if (/not accepted/.test((err as Error).message)) forgetToken();
    } finally {
      setRestoring(false);
    }
  }, []);

  useEffect(() => {
    const t = storedToken();
    if (t) void start(t);
  }, [start]);

  if (restoring) return <p class="loading" role="status">Loading bothy</p>;
  if (!session) return <SignIn onToken={start} error={error} />;
  return (
    <Shell
      session={session}
      onSignOut={async (why) => {
        await session.signOut();
        setSession(null);
        setError(why ?? "");
      }}
    />
  );
}

/** The status line's words for each engine status. */
const STATUS: Record<string, string> = {
  idle: "Starting",
  snapshot: "Loading",
  catching_up: "Catching up",
  live: "Live",
  offline: "Offline, reconnecting",
  stopped: "Stopped",
  failed: "Disconnected",
};

/** The shell: the header (status, search, who is signed in), the sidebar and the route's panes. */
function Shell({ session, onSignOut }: { session: Session; onSignOut: (why?: string) => Promise<void> }) {
  const st = useEngine(session);
  const route = useRoute();
  const online = useOnline();
  const status = session.engine.status;

  useEffect(() => {
    if (status === "failed" && session.engine.lastError?.name === "AuthError") {
      void onSignOut("The server no longer accepts this token; sign in again.");
    }
  }, [status]);

  if (!st) return <p class="loading">Loading</p>;
  const thread = route.view === "thread" ? st.threads[route.id] : undefined;
  const channelId = route.view === "channel" ? route.id : route.view === "thread" ? (thread?.channel_id ?? session.threads.get(route.id)?.channel_id) : undefined;
  const shown = online ? status : "offline";
  return (
    <div class="shell" data-view={route.view}>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById("main")?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="#/">
          bothy
        </a>
        <span class={`status status-${shown}`} role="status" aria-live="polite" data-status={shown}>
          {STATUS[shown] ?? shown}
        </span>
        <SearchBox q={route.view === "search" ? route.q : ""} />
        <span class="me">
          <Avatar session={session} id={st.principal.id} small />
          {st.principal.display_name}
        </span>
        <button type="button" class="link" onClick={() => onSignOut()}>
          Sign out
        </button>
      </header>
      <Sidebar st={st} session={session} current={channelId} />
      <main id="main" tabIndex={-1} class="content">
        {route.view === "home" && <Welcome st={st} />}
        {channelId && <ChannelPane st={st} session={session} channelId={channelId} route={route} />}
        {route.view === "channel" && (
          <p class="pane pick muted" aria-hidden="true">
            Pick a thread to read it, or start a new one.
          </p>
        )}
        {route.view === "thread" && <ThreadPane st={st} session={session} threadId={route.id} target={route.message} online={online && status === "live"} />}
        {route.view === "search" && <SearchPane st={st} session={session} q={route.q} />}
      </main>
    </div>
  );
}
