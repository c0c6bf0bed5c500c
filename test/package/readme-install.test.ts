import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

/**
 * The README's Install and Quick start sections, followed as a newcomer would in an empty folder — with the
 * packed tarball standing in for the registry's `llm-worker` (`npm pack --ignore-scripts`, as in tarball.test.ts)
 * and `--prefer-offline`, so the dependencies come from the npm cache the repository's own install filled. The
 * quick start is the README's code block byte for byte, and its output must be the README's.
 */

const root = fileURLToPath(new URL("../..", import.meta.url))
const npm = process.platform === "win32" ? "npm.cmd" : "npm"

const run = (command: string, args: ReadonlyArray<string>, cwd: string) =>
  new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resolve) =>
    execFile(command, args, { cwd, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr })
    )
  )

const readme = readFileSync(join(root, "README.md"), "utf8")

/** The first fenced block of `lang` in the section under `heading` (up to the next `## `). */
const block = (heading: string, lang: string): string => {
  const start = readme.indexOf(`\n${heading}\n`)
  if (start < 0) throw new Error(`README has no section "${heading}"`)
  const end = readme.indexOf("\n## ", start + heading.length + 2)
  const section = readme.slice(start, end < 0 ? undefined : end)
  const match = new RegExp("```" + lang + "\\n([\\s\\S]*?)```").exec(section)
  if (match?.[1] === undefined) throw new Error(`README's "${heading}" has no ${lang} block`)
  return match[1]
}

describe("the README followed from a packed tarball in a fresh folder", () => {
  const work = mkdtempSync(join(tmpdir(), "llm-worker-readme-"))
  afterAll(() => rm(work, { recursive: true, force: true }), 120_000)

  it("Install's commands install it, and Quick start's program prints what the README says", async () => {
    const pack = await run(npm, ["pack", "--ignore-scripts", "--json", "--pack-destination", work], root)
    expect(pack.code, pack.stderr).toBe(0)
    const tarball = join(work, (JSON.parse(pack.stdout) as ReadonlyArray<{ readonly filename: string }>)[0]?.filename ?? "")
    const app = join(work, "app")
    mkdirSync(app)
    expect((await run(npm, ["init", "-y"], app)).code).toBe(0)

    // Each `npm i …` line of the Install block, comments dropped, the registry's llm-worker swapped for the tarball.
    const commands = block("## Install", "sh")
      .split("\n")
      .map((line) => line.replace(/#.*$/, "").trim())
      .filter((line) => line !== "")
    expect(commands[0]).toBe("npm i llm-worker")
    for (const command of commands) {
      const [tool, verb, ...names] = command.split(/\s+/)
      expect([tool, verb]).toEqual(["npm", "i"])
      const installed = await run(npm, ["install", "--prefer-offline", "--no-audit", "--no-fund", ...names.map((name) => (name === "llm-worker" ? tarball : name))], app)
      expect(installed.code, installed.stderr).toBe(0)
    }
    // The peer dependency came with it, as the README says of npm 7 and later.
    expect(JSON.parse(readFileSync(join(app, "node_modules", "@opentelemetry", "api", "package.json"), "utf8"))).toMatchObject({ name: "@opentelemetry/api" })

    writeFileSync(join(app, "quickstart.mjs"), block("## Quick start", "js"))
    const quick = await run(process.execPath, ["quickstart.mjs"], app)
    expect(quick.stderr).toBe("")
    expect(quick.code).toBe(0)
    expect(quick.stdout).toBe(block("## Quick start", "text"))
  }, 300_000)
})
