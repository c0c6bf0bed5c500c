// Runs before `npm test`: the tool host's status page is tested in a real headless browser (Debian's chromium,
// driven by playwright-core). On a fresh Debian/Ubuntu machine where we may install packages (root, or sudo
// without a password) it installs chromium once, so `npm test` stays the only command a newcomer runs. Elsewhere
// it says that the browser test will be skipped and how to enable it. LLM_WORKER_NO_BROWSER_INSTALL=1 opts out.
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"

const found = () =>
  ["/usr/bin/chromium", "/usr/bin/chromium-browser"].some((path) => existsSync(path)) ||
  spawnSync("sh", ["-c", "command -v chromium"], { stdio: "ignore" }).status === 0

const canInstall = () => {
  if (process.platform !== "linux" || process.env.LLM_WORKER_NO_BROWSER_INSTALL === "1") return undefined
  if (spawnSync("sh", ["-c", "command -v apt-get"], { stdio: "ignore" }).status !== 0) return undefined
  if (process.getuid?.() === 0) return []
  return spawnSync("sudo", ["-n", "true"], { stdio: "ignore" }).status === 0 ? ["sudo"] : undefined
}

if (!found()) {
  const prefix = canInstall()
  if (prefix === undefined) {
    console.error("chromium not found: the status-page browser test will be skipped (install Debian's `chromium` to run it)")
  } else {
    console.error("Installing Debian's chromium for the browser test (apt-get) — first run only…")
    const run = (args) => {
      const [command, ...rest] = [...prefix, ...args]
      return spawnSync(command, rest, { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } }).status === 0
    }
    if (!run(["apt-get", "update", "-qq"]) || !run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"]))
      console.error("could not install chromium: the status-page browser test will be skipped")
  }
}
