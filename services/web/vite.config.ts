// Builds the web client into dist/ (make web-build copies it into the server's webui/dist for
// go:embed). The SDK is taken from its sources in clients/typescript through an alias, so a
// clean clone builds with this directory's `npm ci` alone; its one runtime dependency,
// openapi-fetch, is a dependency here too and resolved from here (dedupe).
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const sdk = fileURLToPath(new URL("../../clients/typescript/src/", import.meta.url));

export default defineConfig({
  base: "./",
  resolve: {
    alias: [{ find: /^@bothy\/client(\/.*)?$/, replacement: `${sdk}$1` }],
    dedupe: ["openapi-fetch"],
  },
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    // One CSS file and no inline data: the server's Content-Security-Policy allows own-origin files only.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
});
