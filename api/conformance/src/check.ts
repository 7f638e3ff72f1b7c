// The client every step of the scenario goes through: openapi-fetch over the types
// openapi-typescript generated from api/openapi.yaml, with a middleware that records what
// Prism's validating proxy says about each response.

import createClient, { type Middleware } from "openapi-fetch";
import type { paths } from "../gen/schema.js";

/** One response Prism found in breach of the document, or a status the step did not expect. */
export interface Finding {
  step: string;
  method: string;
  url: string;
  status: number;
  detail: string;
}

/** What the run saw: findings, and every operation and status it exercised. */
export class Record {
  readonly findings: Finding[] = [];
  readonly exercised = new Map<string, Set<number>>();
  step = "";

  note(op: string, status: number): void {
    const seen = this.exercised.get(op) ?? new Set<number>();
    seen.add(status);
    this.exercised.set(op, seen);
  }
}

/**
 * A typed client for one token. Every response is checked for Prism's `sl-violations` header
 * (its validation of the response against the document); with `--errors`, a violation also
 * turns the response into Prism's 500, which the step's expected status then catches.
 */
export function client(base: string, record: Record, token?: string) {
  const c = createClient<paths>({ baseUrl: base });
  const audit: Middleware = {
    async onRequest({ request }) {
      if (token !== undefined) {
        request.headers.set("Authorization", `Bearer ${token}`);
      }
      return request;
    },
    async onResponse({ request, response }) {
      const violations = response.headers.get("sl-violations");
      if (violations !== null && violations !== "[]") {
        record.findings.push({
          step: record.step,
          method: request.method,
          url: new URL(request.url).pathname,
          status: response.status,
          detail: violations,
        });
      }
      return response;
    },
  };
  c.use(audit);
  return c;
}

/**
 * expect records the operation and status of a result and returns its data, failing the
 * step when the status is not the one the scenario expects.
 */
export function expect<T>(
  record: Record,
  op: string,
  want: number,
  result: { data?: T; error?: unknown; response: Response },
): T {
  const got = result.response.status;
  record.note(op, got);
  if (got !== want) {
    record.findings.push({
      step: record.step,
      method: op,
      url: new URL(result.response.url).pathname,
      status: got,
      detail: `want ${want}: ${JSON.stringify(result.error ?? result.data ?? null)}`,
    });
    throw new Error(`${record.step}: ${op} answered ${got}, want ${want}`);
  }
  return result.data as T;
}
