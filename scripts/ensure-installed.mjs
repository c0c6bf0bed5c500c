// Runs before `npm start` and `npm test`: on a fresh clone it installs the locked dependencies (`npm ci`), so a
// newcomer needs no third command. Plain Node on purpose: nothing is installed yet when it runs.
import { spawnSync } from "node:child_process"
import { existsSync, statSync } from "node:fs"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const npm = process.platform === "win32" ? "npm.cmd" : "npm"

/** `npm ci` in `dir` unless its node_modules is at least as new as its lock file. */
const ensure = (dir, what) => {
  const marker = `${dir}node_modules/.package-lock.json`
  const lock = `${dir}package-lock.json`
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return
  console.error(`Installing ${what} (npm ci) — first run only…`)
  const result = spawnSync(npm, ["ci", "--no-audit", "--no-fund"], { cwd: dir, stdio: "inherit" })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

ensure(root, "the locked dependencies")
// TypeDoc needs the TypeScript 5/6 compiler API, which the project's TypeScript 7 does not offer, so it lives in
// a small project of its own (decision 0033). Only the tests and `npm run docs:api` use it, not `npm start`.
if (process.argv.includes("--with-typedoc")) ensure(`${root}tools/typedoc/`, "TypeDoc for the API reference")
