// `npm run bench`: benchmarks measure the package as users load it. Builds the library into dist/ (scripts/build.mjs),
// compiles bench/*.ts into dist-bench/ with tsc, and runs them with plain Node — no TypeScript loader, whose
// per-closure `__name` definitions would colour every hot path. Bench files reach the library through the
// package's `#internal/*` imports, which resolve to dist/ at run time (and to src/ for the type checker).
// `node scripts/bench.mjs dispatch stream` runs only those benchmarks; `--no-build` skips the library build.
import { spawnSync } from "node:child_process"
import { cpSync, rmSync } from "node:fs"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const args = process.argv.slice(2)
const run = (file, argv) => {
  const child = spawnSync(process.execPath, [file, ...argv], { stdio: "inherit", cwd: root })
  if (child.status !== 0) process.exit(child.status ?? 1)
}
if (!args.includes("--no-build")) run(`${root}scripts/build.mjs`, [])
rmSync(`${root}dist-bench`, { recursive: true, force: true })
run(`${root}node_modules/typescript/bin/tsc`, ["-p", `${root}tsconfig.bench.json`])
cpSync(`${root}bench/support/isolated-handlers.mjs`, `${root}dist-bench/support/isolated-handlers.mjs`)
run(`${root}dist-bench/run-all.js`, args.filter((arg) => arg !== "--no-build"))
