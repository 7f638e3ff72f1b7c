// Syncs as the token's principal and prints every live message (run it with a TypeScript runner, TOKEN=bothy_...).
import WebSocket from "ws"; // Node 20 has no global WebSocket; browsers need no import
import { SyncEngine, FileStorage, isKnownEvent, type WebSocketConstructor } from "../src/index.js";

const engine = new SyncEngine({
  baseUrl: process.env.BASE_URL ?? "http://127.0.0.1:8080",
  token: process.env.TOKEN ?? "",
  storage: new FileStorage("bothy-state.json"), // the cursor survives restarts
  WebSocket: WebSocket as unknown as WebSocketConstructor,
});
engine.onEvent((e) => {
  if (isKnownEvent(e) && e.type === "message.created") console.log(`${e.actor.display_name}: ${e.payload.content_md}`);
});
await engine.start(); // resolves once the store holds a state; syncing goes on until engine.stop()
