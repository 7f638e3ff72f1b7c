// The sync engine's life as a pure state machine (ADR 0037): `next(state, input)` returns the
// next state and the effects the driver (engine.ts) is to perform; it does no I/O, reads no
// clock and draws no random number, so every transition is tested without a network
// (test/machine.test.ts). The driver performs each effect and feeds its outcome back as the
// next input. The store (spec 03's local state: the cursor, threads, messages) is not in here:
// it changes through the reducers of store.ts, which the driver runs; this machine decides
// what the engine does next.
//
//   idle --start(no stored state)--> snapshot --snapshot_loaded--> catching_up
//   idle --start(stored state)-----> catching_up
//   catching_up --caught_up--> connecting        (with a gateway: auth, resume from the cursor)
//   catching_up --caught_up--> live (poll)       (without one: wait pollMs)
//   connecting --socket_live--> live             (catchup.complete)
//   connecting, live --socket_closed--> backing_off --waited--> catching_up
//                                                           \-> snapshot, when one is owed
//   live (poll) --waited--> catching_up
//   resyncing --waited--> catching_up            (recovery retry, under maxCursorRetries)
//   resyncing --waited--> snapshot               (recovery snapshot, or the cap reached)
//
//   every active state: --resync--> resyncing, --error--> backing_off, --fatal--> failed
//   every state: --stop--> stopped
//   failed and stopped take no input: whatever an effect still reports after them is dropped.
import type { ErrorFrame } from "./gen/frames.js";
import { ApiError, AuthError, NetworkError, ResyncRequired } from "./rest.js";

/** A close or frame the client cannot recover from by retrying (a bad frame: a client bug). */
export class FatalSyncError extends Error {
  override name = "FatalSyncError";
}

/** The gateway closed 1013 with an error frame that said how long to wait before coming back. */
export class RetryLater extends Error {
  override name = "RetryLater";
  constructor(readonly waitMs: number) {
    super(`retry after ${waitMs} ms`);
  }
}

/** What the engine is doing, one kind per state; see the diagram above and the README. */
export type PhaseKind =
  | "idle"
  | "snapshot"
  | "catching_up"
  | "connecting"
  | "live"
  | "backing_off"
  | "resyncing"
  | "stopped"
  | "failed";

/** What a reader of SyncEngine.status sees: the phase, with the waiting ones named offline. */
export type SyncStatus = "idle" | "snapshot" | "catching_up" | "live" | "offline" | "stopped" | "failed";

/** The recovery a resync_required asked for (spec 03). */
export type Recovery = ResyncRequired["body"]["recovery"];

/** Settings the machine decides by; fixed for an engine's life. */
export interface MachineConfig {
  /** Whether the engine has a WebSocket; without one it polls over REST. */
  readonly gateway: boolean;
  /** cursor_ahead retries of one cursor before a snapshot. */
  readonly maxCursorRetries: number;
  /** Poll interval of REST catch-up without a gateway. */
  readonly pollMs: number;
}

/** The machine's state: immutable; every transition returns a new one. */
export interface MachineState {
  readonly kind: PhaseKind;
  readonly config: MachineConfig;
  /** Failed attempts in a row, which the next backoff delay grows with. */
  readonly attempt: number;
  /** cursor_ahead retries of the current cursor so far. */
  readonly cursorRetries: number;
  /** A snapshot is owed: none is stored yet, or a resync dropped the cursor. */
  readonly mustSnapshot: boolean;
  /** While resyncing: what to do once retry_after_ms has passed. */
  readonly recovery?: Recovery;
}

/** What the driver reports, or asks of the machine. */
export type Input =
  /** start() loaded the storage: with or without a stored state. */
  | { readonly type: "start"; readonly stored: boolean }
  /** The snapshot is in the store. */
  | { readonly type: "snapshot_loaded" }
  /** REST catch-up reached the head (and the store's todo is done). */
  | { readonly type: "caught_up" }
  /** The gateway sent catchup.complete: events now arrive as they are committed. */
  | { readonly type: "socket_live" }
  /** The gateway's socket closed with a code to resume after (or went silent). */
  | { readonly type: "socket_closed" }
  /** A wait effect ended. */
  | { readonly type: "waited" }
  /** A 410 or a resync_required frame. */
  | { readonly type: "resync"; readonly recovery: Recovery; readonly retryAfterMs: number }
  /** A failure worth another attempt: after waitMs when the server said, else after a backoff. */
  | { readonly type: "error"; readonly waitMs?: number }
  /** A failure no retry mends: the credential ended, or a client bug. */
  | { readonly type: "fatal" }
  /** stop() was called. */
  | { readonly type: "stop" };

/** What the driver is to do: each effect but close_socket reports back with one input. */
export type Effect =
  /** GET /sync/snapshot and put it in the store: snapshot_loaded, or a failure. */
  | { readonly type: "load_snapshot" }
  /** Do the store's todo, then page /events to the head: caught_up, or a failure. */
  | { readonly type: "catch_up" }
  /** Open the gateway, auth and resume from the cursor: socket_live, then socket_closed or a failure. */
  | { readonly type: "open_socket" }
  /** Wait ms, or the jittered backoff of attempt n when no ms is given: waited. */
  | { readonly type: "wait"; readonly ms?: number; readonly backoffAttempt?: number }
  /** Close the socket if one is open (a stop). */
  | { readonly type: "close_socket" };

/** A transition's outcome. */
export interface Step {
  readonly state: MachineState;
  readonly effects: readonly Effect[];
}

/** The state before start. */
export function initialState(config: MachineConfig): MachineState {
  return { kind: "idle", config, attempt: 0, cursorRetries: 0, mustSnapshot: false };
}

/** The status a state shows to readers. */
export function statusOf(s: MachineState): SyncStatus {
  switch (s.kind) {
    case "connecting":
      return "catching_up";
    case "backing_off":
    case "resyncing":
      return "offline";
    default:
      return s.kind;
  }
}

const stay = (state: MachineState): Step => ({ state, effects: [] });

/** The step that (re)starts syncing: a snapshot when one is owed, else catch-up. */
function resume(s: MachineState): Step {
  return s.mustSnapshot
    ? { state: { ...s, kind: "snapshot", recovery: undefined }, effects: [{ type: "load_snapshot" }] }
    : { state: { ...s, kind: "catching_up", recovery: undefined }, effects: [{ type: "catch_up" }] };
}

/** Waits before the next attempt: what the server asked for, else a backoff that grows. */
function backOff(s: MachineState, waitMs?: number): Step {
  if (waitMs !== undefined) return { state: { ...s, kind: "backing_off" }, effects: [{ type: "wait", ms: waitMs }] };
  return { state: { ...s, kind: "backing_off", attempt: s.attempt + 1 }, effects: [{ type: "wait", backoffAttempt: s.attempt }] };
}

/** The states an effect is running in, which failures and stop leave. */
const active: ReadonlySet<PhaseKind> = new Set(["snapshot", "catching_up", "connecting", "live", "backing_off", "resyncing"]);

/**
 * The transition function: the next state and the effects to perform, for a state and an input.
 * An input a state does not expect leaves it as it is, with no effect (a late report of an
 * effect the machine has moved on from, such as a fetch that ends after a stop).
 */
export function next(s: MachineState, input: Input): Step {
  if (s.kind === "stopped" || s.kind === "failed") return stay(s);
  if (input.type === "stop") {
    return { state: { ...s, kind: "stopped", recovery: undefined }, effects: [{ type: "close_socket" }] };
  }
  switch (s.kind) {
    case "idle":
      if (input.type !== "start") return stay(s);
      return resume({ ...s, mustSnapshot: !input.stored });
    case "snapshot":
      if (input.type === "snapshot_loaded") {
        return { state: { ...s, kind: "catching_up", mustSnapshot: false }, effects: [{ type: "catch_up" }] };
      }
      break;
    case "catching_up":
      if (input.type === "caught_up") {
        // The cursor is good again: a later cursor_ahead starts its count anew.
        if (s.config.gateway) return { state: { ...s, kind: "connecting", cursorRetries: 0 }, effects: [{ type: "open_socket" }] };
        return { state: { ...s, kind: "live", cursorRetries: 0, attempt: 0 }, effects: [{ type: "wait", ms: s.config.pollMs }] };
      }
      break;
    case "connecting":
      if (input.type === "socket_live") return stay({ ...s, kind: "live", attempt: 0 });
      if (input.type === "socket_closed") return backOff(s);
      break;
    case "live":
      if (input.type === "socket_closed" && s.config.gateway) return backOff(s);
      if (input.type === "waited" && !s.config.gateway) return resume(s);
      break;
    case "backing_off":
      if (input.type === "waited") return resume(s);
      break;
    case "resyncing":
      if (input.type === "waited") {
        if (s.recovery === "retry" && s.cursorRetries + 1 <= s.config.maxCursorRetries) {
          return resume({ ...s, cursorRetries: s.cursorRetries + 1 });
        }
        // Drop the cursor: a snapshot replaces the store (readers keep the old one until then).
        return resume({ ...s, cursorRetries: 0, mustSnapshot: true });
      }
      break;
  }
  if (!active.has(s.kind)) return stay(s);
  switch (input.type) {
    case "resync":
      return { state: { ...s, kind: "resyncing", recovery: input.recovery }, effects: [{ type: "wait", ms: input.retryAfterMs }] };
    case "error":
      return backOff(s, input.waitMs);
    case "fatal":
      return { state: { ...s, kind: "failed", recovery: undefined }, effects: [{ type: "close_socket" }] };
    default:
      return stay(s);
  }
}

/**
 * The input an effect's failure is: resync for a 410 or a resync_required frame; fatal for a
 * credential that ended, a client bug or a 4xx other than 403 (a 403 is a grant not yet
 * visible, worth another try); error otherwise, with the wait the server asked for if any.
 */
export function failureInput(err: unknown): Input {
  if (err instanceof ResyncRequired) return { type: "resync", recovery: err.body.recovery, retryAfterMs: err.body.retry_after_ms };
  if (err instanceof AuthError || err instanceof FatalSyncError || (err instanceof ApiError && !err.retryable && err.status !== 403)) {
    return { type: "fatal" };
  }
  if (err instanceof RetryLater) return { type: "error", waitMs: err.waitMs };
  if (err instanceof ApiError && err.retryAfterMs !== undefined) return { type: "error", waitMs: err.retryAfterMs };
  return { type: "error" };
}

/** Close codes after which the engine resumes (spec 03): the others end it or are a bug. */
const resumable = new Set([1000, 1001, 1005, 1006, 1011, 1012, 1013, 4002, 4003, 4005, 4006]);

/** The code the engine closes a silent socket with. */
export const SILENCE_CLOSE = 4999;

/**
 * What a gateway close means: undefined to resume (socket_closed), else the error the engine
 * records, whose failureInput says what comes next. resync is the resync_required frame read
 * before the close, lastError the last error frame.
 */
export function closeOutcome(code: number, resync: ResyncRequired["body"] | undefined, lastError: ErrorFrame | undefined): Error | undefined {
  if (resync) return new ResyncRequired(resync);
  if (code === 4001 || code === 4008) return new AuthError(lastError?.code ?? "credential ended");
  if (code === 4000 || code === 4007) return new FatalSyncError(`gateway closed ${code}: ${lastError?.code ?? ""}`);
  if (code === 1013 && lastError?.retry_after_ms !== undefined) return new RetryLater(lastError.retry_after_ms);
  if (!resumable.has(code) && code !== SILENCE_CLOSE) return new NetworkError(`gateway closed ${code}`);
  return undefined;
}
