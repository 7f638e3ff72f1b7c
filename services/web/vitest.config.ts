import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// The unit tests take the SDK from its sources, as the build does (vite.config.ts).
const sdk = fileURLToPath(new URL("../../clients/typescript/src/", import.meta.url));

// The browser tests (test/*.test.ts) start a real bothy serve (BOTHY_BIN, which make web-test
// builds) serving the build in dist/ (web.dir), and drive Debian's Chromium through playwright-core.
export default defineConfig({
  resolve: {
    alias: [{ find: /^@bothy\/client(\/.*)?$/, replacement: `${sdk}$1` }],
    dedupe: ["openapi-fetch"],
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 120000, // a loaded machine (2 cores shared by several builds) runs the long flows slowly
    hookTimeout: 120000,
    fileParallelism: false,
    // expect.poll waits for what the page shows after a request; a second was too short there.
    expect: { poll: { timeout: 15000 } },
  },
});
