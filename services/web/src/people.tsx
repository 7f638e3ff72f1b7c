// A principal's avatar: their initials on a colour of their own (chosen from the id, so it is
// the same on every client). The colours carry white text at WCAG AA contrast (4.5:1 or more).
// The avatar is decoration beside a written name, so it is hidden from assistive technology.
import type { Session } from "./session.js";

/** How many avatar colours styles.css defines (.avatar-0 to .avatar-7). */
const COLOURS = 8;

/** Up to two initials of a name ("Sam" is "S", "Robin Doe" is "RD"). */
export function initials(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const letters = words.length > 1 ? [words[0]!, words[words.length - 1]!].map((w) => [...w][0]) : [...(words[0] ?? "?")].slice(0, 1);
  return letters.join("").toUpperCase();
}

/** The colour class of an id (avatar-0 to avatar-7). */
export function colourOf(id: string): number {
  let h = 0;
  for (const c of id) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return h % COLOURS;
}

/** A principal's avatar (initials on their colour); small for the header and lists. */
export function Avatar({ session, id, small }: { session: Session; id: string; small?: boolean }) {
  const name = session.name(id);
  return (
    <span class={`avatar avatar-${colourOf(id)}${small ? " small" : ""}`} aria-hidden="true" data-testid="avatar">
      {name === "someone" ? "?" : initials(name)}
    </span>
  );
}
