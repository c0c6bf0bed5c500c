// Runs before `npm start` and `npm test`: on a fresh clone it installs the locked dependencies (`npm ci`), so a
// newcomer needs no third command. Plain Node on purpose: nothing is installed yet when it runs.
import { spawnSync } from "node:child_process"
import { existsSync, statSync } from "node:fs"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const marker = `${root}node_modules/.package-lock.json`
const lock = `${root}package-lock.json`
const fresh = existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs

if (!fresh) {
  console.error("Installing the locked dependencies (npm ci) — first run only…")
  const npm = process.platform === "win32" ? "npm.cmd" : "npm"
  const result = spawnSync(npm, ["ci", "--no-audit", "--no-fund"], { cwd: root, stdio: "inherit" })
  if (result.status !== 0) process.exit(result.status ?? 1)
}
