// The sidebar's counters: per channel, the sums of its threads' unread and mention counts, as
// the store knows them. Kept apart from the views so a unit test can hold it to one pass.
import { unreadOf, type StoreState } from "@bothy/client";

/** A channel's counters in the sidebar. */
export interface ChannelCounts {
  unread: number;
  mentions: number;
}

/**
 * The counters of every channel, summed in one pass over the store's threads. The sidebar asks
 * for all its channels at every render: a pass over every thread per channel (500 channels,
 * 2000 unread threads: a million thread visits) took most of a second of each render, the
 * first one included, and every later render repeated it.
 */
export function channelCounts(st: StoreState): Map<string, ChannelCounts> {
  const counts = new Map<string, ChannelCounts>();
  for (const th of Object.values(st.threads)) {
    const u = unreadOf(th);
    const c = counts.get(u.channel_id);
    if (c) {
      c.unread += u.unread_count;
      c.mentions += u.mention_count;
    } else {
      counts.set(u.channel_id, { unread: u.unread_count, mentions: u.mention_count });
    }
  }
  return counts;
}
