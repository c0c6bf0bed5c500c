// Runs before `npm test`: builds dist/ when it is missing or older than anything it is built from, because some
// tests load the package as consumers do (plain Node, the packed tarball, the installed command). Consumers never
// run this: the published tarball already holds dist/, built by `prepack`. Plain Node, like the build itself.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const built = join(root, "dist", "index.js")

const newest = (path) => {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return readdirSync(path).reduce((latest, name) => Math.max(latest, newest(join(path, name))), stat.mtimeMs)
}
const inputs = ["src", "tsconfig.json", "tsconfig.build.json", "scripts/build.mjs", "package.json"].map((name) => join(root, name))

if (!existsSync(built) || Math.max(...inputs.map(newest)) > statSync(built).mtimeMs) {
  console.error("Building dist/ (npm run build): it is missing or older than src/…")
  const result = spawnSync(process.execPath, [join(root, "scripts", "build.mjs")], { stdio: "inherit" })
  if (result.status !== 0) process.exit(result.status ?? 1)
}
