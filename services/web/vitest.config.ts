import { defineConfig } from "vitest/config";

// The browser tests (test/*.test.ts) start a real bothy serve (BOTHY_BIN, which make web-test
// builds) serving the build in dist/ (web.dir), and drive Debian's Chromium through playwright-core.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60000,
    hookTimeout: 120000,
    fileParallelism: false,
  },
});
