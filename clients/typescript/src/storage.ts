// Where the engine keeps its state between runs: one small interface, a store in memory and a
// file store for Node (this file), IndexedDB for browsers (storage-indexeddb.ts). The state is
// saved whole, so the cursor is never stored without the state it acknowledges.
import type { StoreState } from "./store.js";

/** Persistent state of one client (one principal on one server). */
export interface SyncStorage {
  /** The saved state, or undefined when there is none. */
  load(): Promise<StoreState | undefined>;
  /**
   * Replaces the saved state; atomic (a crash leaves the old or the new state). It keeps the
   * state as it is when save is called: the engine hands over its live state, without a copy,
   * and changes it again as soon as save returns, so a storage that writes later (after an
   * await) takes its copy (a serialisation, a structured clone) before it returns.
   */
  save(state: StoreState): Promise<void>;
  /** Forgets the state (a sign-out). */
  clear(): Promise<void>;
}

/** Keeps the state in memory (tests, short-lived clients); saves a copy, never a reference. */
export class MemoryStorage implements SyncStorage {
  private json?: string;
  /** How often save was called (tests read it). */
  saves = 0;

  async load(): Promise<StoreState | undefined> {
    return this.json === undefined ? undefined : (JSON.parse(this.json) as StoreState);
  }

  async save(state: StoreState): Promise<void> {
    this.json = JSON.stringify(state);
    this.saves++;
  }

  async clear(): Promise<void> {
    this.json = undefined;
  }
}

/** Keeps the state in one JSON file (Node): written to a temporary file, then renamed over it. */
export class FileStorage implements SyncStorage {
  constructor(private readonly path: string) {}

  async load(): Promise<StoreState | undefined> {
    const { readFile } = await import("node:fs/promises");
    try {
      return JSON.parse(await readFile(this.path, "utf8")) as StoreState;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
  }

  async save(state: StoreState): Promise<void> {
    const json = JSON.stringify(state); // before the first await: the state changes after it
    const { writeFile, rename } = await import("node:fs/promises");
    const tmp = `${this.path}.tmp`;
    await writeFile(tmp, json);
    await rename(tmp, this.path);
  }

  async clear(): Promise<void> {
    const { rm } = await import("node:fs/promises");
    await rm(this.path, { force: true });
  }
}
