import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileStorage, MemoryStorage, type SyncStorage } from "../src/storage.js";
import type { StoreState } from "../src/store.js";

const dirs: string[] = [];
const storages: { name: string; make: () => SyncStorage }[] = [
  { name: "MemoryStorage", make: () => new MemoryStorage() },
  {
    name: "FileStorage",
    make: () => {
      const dir = mkdtempSync(join(tmpdir(), "bothy-sdk-storage-"));
      dirs.push(dir);
      return new FileStorage(join(dir, "state.json"));
    },
  },
];

/** A state with the parts the test changes; a storage keeps whatever it is given, whole. */
function state(cursor: number): StoreState {
  return { format: 1, cursor, drafts: { "c/t": { content_md: "Half a reply" } } } as unknown as StoreState;
}

describe.each(storages)("$name", ({ make }) => {
  it("keeps what the state was when save was called: the engine changes it right after, without a copy", async () => {
    const s = make();
    try {
      const st = state(7);
      const saved = s.save(st);
      st.cursor = 8; // the engine's next step, before the write has ended
      st.drafts["c/t"]!.content_md = "Changed after the save";
      await saved;
      const got = await s.load();
      expect(got!.cursor).toBe(7);
      expect(got!.drafts["c/t"]!.content_md).toBe("Half a reply");
      await s.clear();
      expect(await s.load()).toBeUndefined();
    } finally {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    }
  });
});
