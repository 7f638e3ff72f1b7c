// Jittered exponential backoff and a sleep that a stop can cut short.

/** Backoff settings: the first delay and the cap, in milliseconds. */
export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
}

/**
 * The delay before attempt n (0-based): a random point in [d/2, d] with d = min(max, base*2^n)
 * ("equal jitter"), so that clients cut off together do not come back together.
 */
export function backoffDelay(n: number, o: BackoffOptions, random: () => number = Math.random): number {
  const d = Math.min(o.maxMs, o.baseMs * 2 ** Math.min(n, 30));
  return d / 2 + random() * (d / 2);
}

/** Resolves after ms, or at once when signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
