// The browser storage: the whole state as one record of an IndexedDB object store. Not run by
// the Node tests (Node has no IndexedDB); the web client's real-browser tests cover it.
import type { SyncStorage } from "./storage.js";
import type { StoreState } from "./store.js";

const STORE = "state";
const KEY = "current";

/** Keeps the state in IndexedDB database `name` (one per principal and server). */
export class IndexedDBStorage implements SyncStorage {
  private db?: Promise<IDBDatabase>;
  /** The database once open: save puts at once then, and put clones the state as it is. */
  private opened?: IDBDatabase;

  constructor(private readonly name: string) {}

  private open(): Promise<IDBDatabase> {
    this.db ??= new Promise((resolve, reject) => {
      const req = indexedDB.open(this.name, 1);
      req.onupgradeneeded = () => req.result.createObjectStore(STORE);
      req.onsuccess = () => {
        this.opened = req.result;
        resolve(req.result);
      };
      req.onerror = () => reject(req.error);
    });
    return this.db;
  }

  private async run<T>(mode: IDBTransactionMode, f: (s: IDBObjectStore) => IDBRequest<T>): Promise<T> {
    return this.request(await this.open(), mode, f);
  }

  /** Runs f in a transaction of db; f runs before it returns (put clones its value then). */
  private request<T>(db: IDBDatabase, mode: IDBTransactionMode, f: (s: IDBObjectStore) => IDBRequest<T>): Promise<T> {
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
    // put clones the state when it is called, so it must be called before save returns: at
    // once when the database is open, else on a copy taken now (the first save only).
    if (this.opened) {
      await this.request(this.opened, "readwrite", (s) => s.put(state, KEY));
      return;
    }
    const copy = structuredClone(state);
    await this.run("readwrite", (s) => s.put(copy, KEY));
  }

  async clear(): Promise<void> {
    await this.run("readwrite", (s) => s.delete(KEY));
  }
}
