#!/usr/bin/env node
// The compiled CLI. The published package holds dist/ (built by `prepack`); a checkout builds it with
// `npm run build` (`npm test` does so when it is stale), or runs the sources with `npm start` / `npm run chat`.
const main = new URL("../dist/cli/main.js", import.meta.url)
try {
  await import(main.href)
} catch (error) {
  if (error?.code !== "ERR_MODULE_NOT_FOUND" || !String(error.message).includes(main.pathname)) throw error
  console.error("llm-worker: dist/ is not built; in a checkout run `npm run build` first (or `npm start` / `npm run chat`, which run the sources)")
  process.exit(1)
}
