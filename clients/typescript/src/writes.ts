// Writes that are safe to retry: one Idempotency-Key per logical action, kept across every
// retry of it, so the server carries the action out once (spec 05, ADR 0013) however often the
// network loses an answer.
import { ApiError, NetworkError, call } from "./rest.js";
import { backoffDelay, sleep, type BackoffOptions } from "./backoff.js";

/** Retry settings of writes. */
export interface RetryOptions extends BackoffOptions {
  /** Attempts in all, the first included. */
  attempts: number;
}

/** A fresh Idempotency-Key (a UUID: printable ASCII, unique per logical action). */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/**
 * Runs send(key) until it succeeds, retrying with the same key on a network error, a 5xx or a
 * 429, waiting the answer's Retry-After when it has one and the jittered backoff otherwise.
 * Any other failure (a 4xx) is final and thrown at once, as is the last retryable one.
 */
export async function withRetries<T>(
  send: (key: string) => Promise<{ data?: T; error?: unknown; response: Response }>,
  o: RetryOptions & { key?: string; random?: () => number; signal?: AbortSignal },
): Promise<T> {
  const key = o.key ?? newIdempotencyKey();
  for (let attempt = 0; ; attempt++) {
    try {
      return await call(send(key));
    } catch (err) {
      const retryable = err instanceof NetworkError || (err instanceof ApiError && err.retryable);
      if (!retryable || attempt + 1 >= o.attempts || o.signal?.aborted) throw err;
      const wait = err instanceof ApiError && err.retryAfterMs !== undefined ? err.retryAfterMs : backoffDelay(attempt, o, o.random);
      await sleep(wait, o.signal);
      if (o.signal?.aborted) throw err;
    }
  }
}
