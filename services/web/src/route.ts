// Fragment routing: webui serves only the build's files, so every view lives after the `#`.
//   #/                 the sidebar (spaces and channels)
//   #/c/<id>           a channel: its threads
//   #/t/<id>           a thread: its messages
//   #/t/<id>/m/<id>    a thread, scrolled to one of its messages (a search hit)
//   #/search?q=<text>  the messages that match a search
import { useEffect, useState } from "preact/hooks";

/** Where the app is. */
export type Route =
  | { view: "home" }
  | { view: "channel"; id: string }
  | { view: "thread"; id: string; message?: string }
  | { view: "search"; q: string };

const UUID = "[0-9a-fA-F-]{36}";

/** Parses a location hash (with or without its `#`). */
export function parseRoute(hash: string): Route {
  const h = hash.replace(/^#/, "");
  const search = h.match(/^\/search\?q=(.*)$/);
  if (search) {
    let q = "";
    try {
      q = decodeURIComponent(search[1]!.replace(/\+/g, " "));
    } catch {
      // a damaged query: an empty search
    }
    return { view: "search", q };
  }
  const m = h.match(new RegExp(`^/(c|t)/(${UUID})(?:/m/(${UUID}))?$`));
  if (!m) return { view: "home" };
  if (m[1] === "c") return m[3] ? { view: "home" } : { view: "channel", id: m[2]!.toLowerCase() };
  return { view: "thread", id: m[2]!.toLowerCase(), ...(m[3] ? { message: m[3].toLowerCase() } : {}) };
}

/** The hash of a route. */
export function href(r: Route): string {
  switch (r.view) {
    case "home":
      return "#/";
    case "channel":
      return `#/c/${r.id}`;
    case "thread":
      return r.message ? `#/t/${r.id}/m/${r.message}` : `#/t/${r.id}`;
    case "search":
      return `#/search?q=${encodeURIComponent(r.q)}`;
  }
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
