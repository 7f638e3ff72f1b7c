// The browser storage: the whole state as one record of an IndexedDB object store. Not run by
// the Node tests (Node has no IndexedDB); the web client's real-browser tests cover it.
import type { SyncStorage } from "./storage.js";
import type { StoreState } from "./store.js";

const STORE = "state";
const KEY = "current";

/** Keeps the state in IndexedDB database `name` (one per principal and server). */
export class IndexedDBStorage implements SyncStorage {
  private db?: Promise<IDBDatabase>;

  constructor(private readonly name: string) {}

  private open(): Promise<IDBDatabase> {
    this.db ??= new Promise((resolve, reject) => {
      const req = indexedDB.open(this.name, 1);
      req.onupgradeneeded = () => req.result.createObjectStore(STORE);
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    return this.db;
  }

  private async run<T>(mode: IDBTransactionMode, f: (s: IDBObjectStore) => IDBRequest<T>): Promise<T> {
    const db = await this.open();
    return new Promise((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const req = f(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(req.result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
  }

  async load(): Promise<StoreState | undefined> {
    return (await this.run("readonly", (s) => s.get(KEY))) as StoreState | undefined;
  }

  async save(state: StoreState): Promise<void> {
    await this.run("readwrite", (s) => s.put(state, KEY));
  }

  async clear(): Promise<void> {
    await this.run("readwrite", (s) => s.delete(KEY));
  }
}
