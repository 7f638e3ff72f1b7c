// The engine's state machine (src/machine.ts) tested alone: every state against every input,
// without a network, a clock or a socket.
import { describe, expect, it } from "vitest";
import {
  FatalSyncError,
  RetryLater,
  SILENCE_CLOSE,
  closeOutcome,
  failureInput,
  initialState,
  next,
  statusOf,
  type Effect,
  type Input,
  type MachineConfig,
  type MachineState,
  type PhaseKind,
} from "../src/machine.js";
import { ApiError, AuthError, NetworkError, ResyncRequired } from "../src/rest.js";

const gateway: MachineConfig = { gateway: true, maxCursorRetries: 3, pollMs: 2000 };
const polling: MachineConfig = { gateway: false, maxCursorRetries: 3, pollMs: 2000 };

/** A state of a kind, with the counters a case sets. */
function at(kind: PhaseKind, extra: Partial<MachineState> = {}, config = gateway): MachineState {
  return { ...initialState(config), kind, ...extra };
}

const inputs: Record<Input["type"], Input> = {
  start: { type: "start", stored: true },
  snapshot_loaded: { type: "snapshot_loaded" },
  caught_up: { type: "caught_up" },
  socket_live: { type: "socket_live" },
  socket_closed: { type: "socket_closed" },
  waited: { type: "waited" },
  resync: { type: "resync", recovery: "snapshot", retryAfterMs: 50 },
  error: { type: "error" },
  fatal: { type: "fatal" },
  stop: { type: "stop" },
};

const kinds: PhaseKind[] = ["idle", "snapshot", "catching_up", "connecting", "live", "backing_off", "resyncing", "stopped", "failed"];

interface Case {
  name: string;
  from: MachineState;
  input: Input;
  want: Partial<MachineState>;
  effects: Effect[];
}

const stop: Effect = { type: "close_socket" };

/** The transitions that do something; every other pair of state and input is a no-op. */
const cases: Case[] = [
  { name: "idle, start without a stored state: snapshot", from: at("idle"), input: { type: "start", stored: false }, want: { kind: "snapshot", mustSnapshot: true }, effects: [{ type: "load_snapshot" }] },
  { name: "idle, start with a stored state: catch up", from: at("idle"), input: { type: "start", stored: true }, want: { kind: "catching_up", mustSnapshot: false }, effects: [{ type: "catch_up" }] },
  { name: "snapshot, loaded: catch up, no snapshot owed", from: at("snapshot", { mustSnapshot: true }), input: inputs.snapshot_loaded, want: { kind: "catching_up", mustSnapshot: false }, effects: [{ type: "catch_up" }] },
  { name: "catching up, caught up with a gateway: connect, cursor retries reset", from: at("catching_up", { cursorRetries: 2, attempt: 3 }), input: inputs.caught_up, want: { kind: "connecting", cursorRetries: 0, attempt: 3 }, effects: [{ type: "open_socket" }] },
  { name: "catching up, caught up without a gateway: live, poll later", from: at("catching_up", { cursorRetries: 2, attempt: 3 }, polling), input: inputs.caught_up, want: { kind: "live", cursorRetries: 0, attempt: 0 }, effects: [{ type: "wait", ms: 2000 }] },
  { name: "connecting, catchup.complete: live, attempts reset", from: at("connecting", { attempt: 4 }), input: inputs.socket_live, want: { kind: "live", attempt: 0 }, effects: [] },
  { name: "connecting, closed before live: back off, attempt grows", from: at("connecting", { attempt: 4 }), input: inputs.socket_closed, want: { kind: "backing_off", attempt: 5 }, effects: [{ type: "wait", backoffAttempt: 4 }] },
  { name: "live, socket closed: back off from the first delay", from: at("live"), input: inputs.socket_closed, want: { kind: "backing_off", attempt: 1 }, effects: [{ type: "wait", backoffAttempt: 0 }] },
  { name: "live by polling, poll due: catch up", from: at("live", {}, polling), input: inputs.waited, want: { kind: "catching_up" }, effects: [{ type: "catch_up" }] },
  { name: "backing off, waited: catch up", from: at("backing_off", { attempt: 2 }), input: inputs.waited, want: { kind: "catching_up", attempt: 2 }, effects: [{ type: "catch_up" }] },
  { name: "backing off with a snapshot owed, waited: snapshot", from: at("backing_off", { mustSnapshot: true }), input: inputs.waited, want: { kind: "snapshot", mustSnapshot: true }, effects: [{ type: "load_snapshot" }] },
  { name: "resyncing for a snapshot, waited: snapshot", from: at("resyncing", { recovery: "snapshot", cursorRetries: 1 }), input: inputs.waited, want: { kind: "snapshot", mustSnapshot: true, cursorRetries: 0, recovery: undefined }, effects: [{ type: "load_snapshot" }] },
  { name: "resyncing for a retry, under the cap: same cursor again", from: at("resyncing", { recovery: "retry", cursorRetries: 2 }), input: inputs.waited, want: { kind: "catching_up", cursorRetries: 3, mustSnapshot: false, recovery: undefined }, effects: [{ type: "catch_up" }] },
  { name: "resyncing for a retry, at the cap: snapshot", from: at("resyncing", { recovery: "retry", cursorRetries: 3 }), input: inputs.waited, want: { kind: "snapshot", cursorRetries: 0, mustSnapshot: true, recovery: undefined }, effects: [{ type: "load_snapshot" }] },
];

// Failures and stop, from every state an effect runs in.
for (const kind of ["snapshot", "catching_up", "connecting", "live", "backing_off", "resyncing"] as const) {
  const from = at(kind, { attempt: 1, recovery: kind === "resyncing" ? "retry" : undefined });
  cases.push(
    { name: `${kind}, resync: wait retry_after_ms`, from, input: { type: "resync", recovery: "retry", retryAfterMs: 50 }, want: { kind: "resyncing", recovery: "retry", attempt: 1 }, effects: [{ type: "wait", ms: 50 }] },
    { name: `${kind}, error with Retry-After: wait that long`, from, input: { type: "error", waitMs: 700 }, want: { kind: "backing_off", attempt: 1 }, effects: [{ type: "wait", ms: 700 }] },
    { name: `${kind}, error: back off`, from, input: inputs.error, want: { kind: "backing_off", attempt: 2 }, effects: [{ type: "wait", backoffAttempt: 1 }] },
    { name: `${kind}, fatal: failed`, from, input: inputs.fatal, want: { kind: "failed", recovery: undefined }, effects: [stop] },
    { name: `${kind}, stop: stopped`, from, input: inputs.stop, want: { kind: "stopped", recovery: undefined }, effects: [stop] },
  );
}
cases.push({ name: "idle, stop: stopped", from: at("idle"), input: inputs.stop, want: { kind: "stopped" }, effects: [stop] });

describe("next", () => {
  it.each(cases)("$name", ({ from, input, want, effects }) => {
    const frozen = Object.freeze({ ...from });
    const got = next(frozen, input);
    expect(got.state).toEqual({ ...from, ...want });
    expect(got.effects).toEqual(effects);
    expect(frozen).toEqual(from); // the state it was given is left as it was
  });

  // Every pair of state and input the cases above do not name leaves the state as it is. Three
  // pairs depend on whether there is a gateway; the others do not.
  const byConfig = new Set(["catching_up/caught_up", "live/socket_closed", "live/waited"]);
  const key = (kind: PhaseKind, type: Input["type"], config: MachineConfig) =>
    byConfig.has(`${kind}/${type}`) ? `${kind}/${type}/${config.gateway}` : `${kind}/${type}`;
  const named = new Set(cases.map((c) => key(c.from.kind, c.input.type, c.from.config)));
  const others: { name: string; from: MachineState; input: Input }[] = [];
  for (const config of [gateway, polling]) {
    for (const kind of kinds) {
      for (const input of Object.values(inputs)) {
        if (named.has(key(kind, input.type, config))) continue;
        others.push({ name: `${kind} (${config.gateway ? "gateway" : "polling"}), ${input.type}: unchanged`, from: at(kind, {}, config), input });
      }
    }
  }
  it.each(others)("$name", ({ from, input }) => {
    expect(next(from, input)).toEqual({ state: from, effects: [] });
  });
});

describe("statusOf", () => {
  it.each<[PhaseKind, string]>([
    ["idle", "idle"],
    ["snapshot", "snapshot"],
    ["catching_up", "catching_up"],
    ["connecting", "catching_up"],
    ["live", "live"],
    ["backing_off", "offline"],
    ["resyncing", "offline"],
    ["stopped", "stopped"],
    ["failed", "failed"],
  ])("%s shows %s", (kind, status) => {
    expect(statusOf(at(kind))).toBe(status);
  });
});

describe("failureInput", () => {
  const resync = { reason: "epoch_changed" as const, recovery: "snapshot" as const, retry_after_ms: 25, head_seq: 9, sync_epoch: "e", oldest_seq: 1 };
  it.each<[string, unknown, Input]>([
    ["a 410", new ResyncRequired(resync), { type: "resync", recovery: "snapshot", retryAfterMs: 25 }],
    ["a 401", new AuthError("expired"), { type: "fatal" }],
    ["a bad frame", new FatalSyncError("4000"), { type: "fatal" }],
    ["a 400", new ApiError(400, { code: "invalid" }), { type: "fatal" }],
    ["a 403 (a grant not yet visible)", new ApiError(403, { code: "forbidden" }), { type: "error" }],
    ["a 503 with Retry-After", new ApiError(503, {}, 1500), { type: "error", waitMs: 1500 }],
    ["a 500", new ApiError(500, {}), { type: "error" }],
    ["a 1013 with retry_after_ms", new RetryLater(300), { type: "error", waitMs: 300 }],
    ["a network error", new NetworkError("reset"), { type: "error" }],
    ["anything else", new Error("?"), { type: "error" }],
  ])("%s", (_name, err, want) => {
    expect(failureInput(err)).toEqual(want);
  });
});

describe("closeOutcome", () => {
  const resync = { reason: "too_far_behind" as const, recovery: "snapshot" as const, retry_after_ms: 0, head_seq: 9, sync_epoch: "e", oldest_seq: 1 };
  it.each<[string, number, boolean, { code: string; retry_after_ms?: number } | undefined, (new (...a: never[]) => Error) | undefined]>([
    ["a resync frame before any close", 1000, true, undefined, ResyncRequired],
    ["4001: the credential ended", 4001, false, { code: "token_revoked" }, AuthError],
    ["4008: the credential expired", 4008, false, undefined, AuthError],
    ["4000: a bad frame", 4000, false, undefined, FatalSyncError],
    ["4007: a bad frame", 4007, false, undefined, FatalSyncError],
    ["1013 with retry_after_ms", 1013, false, { code: "overloaded", retry_after_ms: 200 }, RetryLater],
    ["1013 without", 1013, false, undefined, undefined],
    ["1006: resume", 1006, false, undefined, undefined],
    ["4006: resume", 4006, false, undefined, undefined],
    ["silence: resume", SILENCE_CLOSE, false, undefined, undefined],
    ["an unknown code", 4100, false, undefined, NetworkError],
  ])("%s", (_name, code, withResync, frame, want) => {
    const got = closeOutcome(code, withResync ? resync : undefined, frame as never);
    if (want === undefined) expect(got).toBeUndefined();
    else expect(got).toBeInstanceOf(want);
  });
});
