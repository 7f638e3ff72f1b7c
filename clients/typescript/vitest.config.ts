import { defineConfig } from "vitest/config";

// Unit tests (test/*.test.ts) run against a scripted fake; the integration tests
// (test/integration/*.test.ts) start a real bothy serve and need BOTHY_BIN (make sdk-test sets it).
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20000,
    hookTimeout: 120000,
    fileParallelism: false,
  },
});
