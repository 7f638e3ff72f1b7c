// The sidebar pane: the spaces the reader can see with their channels, then the direct
// messages, each a link with its unread and mention badges (counts.ts sums them from the store).
import type { StoreState } from "@bothy/client";
import type { Session } from "./session.js";
import { href } from "./route.js";
import { channelCounts } from "./counts.js";
import { Badges } from "./badges.js";

/** A channel's label: its name, or for a direct message the names of the others in it. */
export function channelName(st: StoreState, session: Session, channelId: string): string {
  const ch = st.channels[channelId];
  if (!ch) return "unknown channel";
  if (ch.kind === "dm") {
    const others = ch.participant_ids.filter((p) => p !== st.principal.id).map((p) => session.name(p));
    return others.length ? others.join(", ") : "Just you";
  }
  return ch.name ?? "unnamed";
}

/** The sidebar pane; current is the channel shown (marked aria-current). */
export function Sidebar({ st, session, current }: { st: StoreState; session: Session; current?: string }) {
  const spaces = Object.values(st.spaces).sort((a, b) => a.name.localeCompare(b.name));
  const channels = Object.values(st.channels);
  const dms = channels.filter((c) => c.kind === "dm");
  const counts = channelCounts(st);
  const link = (id: string, label: string) => {
    const c = counts.get(id) ?? { unread: 0, mentions: 0 };
    return (
      <li key={id}>
        <a href={href({ view: "channel", id })} aria-current={id === current ? "page" : undefined} class={c.unread ? "unread" : undefined}>
          <span class="name">{label}</span>
          <Badges {...c} />
        </a>
      </li>
    );
  };
  return (
    <nav class="sidebar pane" aria-label="Spaces and channels">
      {spaces.map((sp) => {
        const list = channels.filter((c) => c.space_id === sp.id && c.kind !== "dm").sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""));
        return (
          <section key={sp.id} aria-labelledby={`space-${sp.id}`}>
            <h2 id={`space-${sp.id}`}>{sp.name}</h2>
            {list.length ? <ul>{list.map((c) => link(c.id, `# ${c.name ?? "unnamed"}`))}</ul> : <p class="muted">No channels you can see.</p>}
          </section>
        );
      })}
      {dms.length > 0 && (
        <section aria-labelledby="space-dms">
          <h2 id="space-dms">Direct messages</h2>
          <ul>{dms.map((c) => link(c.id, channelName(st, session, c.id)))}</ul>
        </section>
      )}
    </nav>
  );
}
