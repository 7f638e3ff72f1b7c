// Fragment routing: webui serves only the build's files, so every view lives after the `#`.
//   #/            the sidebar (spaces and channels)
//   #/c/<id>      a channel: its threads
//   #/t/<id>      a thread: its messages
import { useEffect, useState } from "preact/hooks";

/** Where the app is. */
export type Route = { view: "home" } | { view: "channel"; id: string } | { view: "thread"; id: string };

/** Parses a location hash (with or without its `#`). */
export function parseRoute(hash: string): Route {
  const m = hash.replace(/^#/, "").match(/^\/(c|t)\/([0-9a-fA-F-]{36})$/);
  if (!m) return { view: "home" };
  return { view: m[1] === "c" ? "channel" : "thread", id: m[2]!.toLowerCase() };
}

/** The hash of a route. */
export function href(r: Route): string {
  return r.view === "home" ? "#/" : `#/${r.view === "channel" ? "c" : "t"}/${r.id}`;
}

/** The current route, following hashchange. */
export function useRoute(): Route {
  const [r, setR] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setR(parseRoute(location.hash));
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return r;
}
