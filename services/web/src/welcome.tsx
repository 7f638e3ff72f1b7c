// The home pane (route #/): a greeting, and what to do when there is no channel yet.
import type { StoreState } from "@bothy/client";

/** The home pane: pick a channel, or ask for a grant when the reader is in none. */
export function Welcome({ st }: { st: StoreState }) {
  const none = Object.keys(st.channels).length === 0;
  return (
    <section class="pane welcome">
      <h1>Welcome, {st.principal.display_name}</h1>
      <p>{none ? "You are in no channel yet: ask an owner or admin for a grant." : "Pick a channel on the left to see its threads."}</p>
    </section>
  );
}
