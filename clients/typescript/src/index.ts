// The bothy TypeScript SDK: typed REST client, typed events, local store and sync engine.
export * from "./events.js";
/** The gateway's frames, generated from api/gateway.asyncapi.yaml (src/gen/frames.ts). */
export type * from "./gen/frames.js";
export * from "./rest.js";
export * from "./store.js";
export * from "./storage.js";
export * from "./writes.js";
export * from "./backoff.js";
export { SyncEngine, type EngineOptions, type WebSocketLike, type WebSocketConstructor } from "./engine.js";
/** The engine's state machine (next, its states, inputs and effects; ADR 0037), FatalSyncError and SyncStatus. */
export * from "./machine.js";
