// Builds the publishable package: JavaScript + declarations from src/ into dist/ (tsc), then the non-code files
// the CLI reads at run time (recorded SSE streams) and the isolation pool's thread entry, which is plain JavaScript
// so that a worker thread loads it without a TypeScript loader. Plain Node: it runs from `prepack` (so every tarball
// holds a fresh build) and from `pretest` when dist/ is stale (scripts/ensure-built.mjs); consumers never build.
import { spawnSync } from "node:child_process"
import { cpSync, existsSync, readFileSync, rmSync } from "node:fs"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
rmSync(`${root}dist`, { recursive: true, force: true })
const tsc = spawnSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, "-p", `${root}tsconfig.build.json`], { stdio: "inherit" })
if (tsc.status !== 0) process.exit(tsc.status ?? 1)
cpSync(`${root}src/cli/recordings`, `${root}dist/cli/recordings`, { recursive: true })
cpSync(`${root}src/isolation/thread-entry.mjs`, `${root}dist/isolation/thread-entry.mjs`)
// Every subpath entry must exist after the build (`llm-worker/isolated`, `llm-worker/plugin-llm`, …): a renamed
// entry module would otherwise ship a package whose export points at nothing.
const { exports: entries } = JSON.parse(readFileSync(`${root}package.json`, "utf8"))
for (const [subpath, target] of Object.entries(entries)) {
  if (typeof target === "object" && target.default !== undefined && !existsSync(`${root}${target.default}`)) {
    console.error(`build: export ${subpath} points at ${target.default}, which the build did not produce`)
    process.exit(1)
  }
}
