// The typed REST client (openapi-fetch over the generated paths) and the errors the SDK maps
// every failed call to, in one place.
import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./gen/openapi.js";
import type { ResyncBody, Schemas } from "./events.js";

/** The typed REST client of the whole API. */
export type RestClient = Client<paths>;

/** Options of createRestClient. */
export interface RestOptions {
  /** The server's origin, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  /** A bearer token (bothy_...). */
  token: string;
  /** The fetch to use; the global fetch by default (Node 20, browsers). */
  fetch?: typeof fetch;
}

/** A typed client of every operation of api/openapi.yaml, authenticated with the token. */
export function createRestClient(o: RestOptions): RestClient {
  const f = o.fetch ?? globalThis.fetch;
  return createClient<paths>({
    baseUrl: o.baseUrl.replace(/\/$/, ""),
    headers: { Authorization: `Bearer ${o.token}` },
    fetch: (req: Request) => f(req),
  });
}

/** The request never got an answer (connection refused or reset, DNS, a timeout). */
export class NetworkError extends Error {
  override name = "NetworkError";
}

/** A problem answer (spec 05): status, code and, for 429 and 503, how long to wait. */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: number,
    readonly problem: Partial<Schemas["Problem"]>,
    /** Retry-After in milliseconds, when the answer had one. */
    readonly retryAfterMs?: number,
  ) {
    super(`${status} ${problem.code ?? ""}: ${problem.detail ?? ""}`);
  }

  /** Worth retrying as it is: 5xx and 429 (the request was not carried out). */
  get retryable(): boolean {
    return this.status >= 500 || this.status === 429;
  }
}

/** 410 resync_required (REST) or the gateway's resync_required frame. */
export class ResyncRequired extends Error {
  override name = "ResyncRequired";
  constructor(readonly body: Pick<ResyncBody, "reason" | "recovery" | "retry_after_ms" | "head_seq" | "sync_epoch" | "oldest_seq">) {
    super(`resync required: ${body.reason} (recovery ${body.recovery})`);
  }
}

/** The credential was refused or ended (401, close 4001 or 4008): a new token is needed. */
export class AuthError extends Error {
  override name = "AuthError";
}

/** Reads Retry-After (seconds or an HTTP date) as milliseconds. */
export function retryAfterMs(h: string | null, now = Date.now()): number | undefined {
  if (!h) return undefined;
  const s = Number(h);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const t = Date.parse(h);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

/**
 * Runs one openapi-fetch call and returns its data, or throws NetworkError, ResyncRequired,
 * AuthError or ApiError.
 */
export async function call<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let r: { data?: T; error?: unknown; response: Response };
  try {
    r = await p;
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause;
    throw new NetworkError(cause ? `${String(err)}: ${String(cause)}` : String(err), { cause: err });
  }
  if (r.response.ok) return r.data as T;
  const problem = (r.error ?? {}) as Partial<ResyncBody>;
  if (r.response.status === 410 && problem.code === "resync_required") {
    throw new ResyncRequired(problem as ResyncBody);
  }
  if (r.response.status === 401) throw new AuthError(problem.detail ?? "unauthenticated");
  throw new ApiError(r.response.status, problem, retryAfterMs(r.response.headers.get("Retry-After")));
}
