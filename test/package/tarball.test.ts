import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/**
 * The package as a consumer gets it: `npm pack` of the built dist/ (`--ignore-scripts`: `npm test` has already
 * rebuilt a stale dist/, and a rebuild here would pull dist/ from under the tests running beside this one), then
 * `npm install <tarball>` into a fresh folder, from the npm cache the repository's own install filled. There
 * every entry point must load with `import` and with `require` (Node ≥ 20.19, decision 0031), and a strict
 * TypeScript app must compile against the shipped declarations, even with `customConditions: ["source"]`.
 */

const root = fileURLToPath(new URL("../..", import.meta.url))
const npm = process.platform === "win32" ? "npm.cmd" : "npm"
const SUBPATHS = ["llm-worker", "llm-worker/testing", "llm-worker/isolated", "llm-worker/remote", "llm-worker/remote/plugin", "llm-worker/plugin-llm"] as const

const run = (command: string, args: ReadonlyArray<string>, cwd: string) =>
  new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resolve) =>
    execFile(command, args, { cwd, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr })
    )
  )

describe("the packed tarball in a fresh consumer", () => {
  const work = mkdtempSync(join(tmpdir(), "llm-worker-tarball-"))
  const app = join(work, "app")
  let files: ReadonlyArray<string> = []
  let install: Awaited<ReturnType<typeof run>>

  beforeAll(async () => {
    const pack = await run(npm, ["pack", "--ignore-scripts", "--json", "--pack-destination", work], root)
    expect(pack.code, pack.stderr).toBe(0)
    const [packed] = JSON.parse(pack.stdout) as ReadonlyArray<{ readonly filename: string; readonly files: ReadonlyArray<{ readonly path: string }> }>
    files = packed?.files.map((file) => file.path) ?? []
    mkdirSync(app)
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }))
    install = await run(npm, ["install", "--prefer-offline", "--no-audit", "--no-fund", join(work, packed?.filename ?? "")], app)
  }, 240_000)
  // A consumer node_modules is thousands of files: removing it can take a while on a busy machine.
  afterAll(() => rm(work, { recursive: true, force: true }), 120_000)

  it("ships the build, the docs and the package files, and no sources", () => {
    for (const file of ["LICENSE", "README.md", "CHANGELOG.md", "package.json", "bin/llm-worker.mjs", "dist/index.js", "dist/index.d.ts"]) {
      expect(files).toContain(file)
    }
    for (const file of ["dist/testing/index.js", "dist/isolation/index.js", "dist/isolation/thread-entry.mjs", "docs/guides/worker.md"]) {
      expect(files).toContain(file)
    }
    expect(files.filter((file) => /^(src|test|tools|bench|scripts|\.ci)\//.test(file) || file.startsWith("docs/api/") || file.endsWith(".d.ts.map"))).toEqual([])
    // The benchmark tables are run results, kept in the repository only (decision 0099).
    expect(files).not.toContain("docs/benchmarks.md")
  })

  it("has every README link into the repository resolve to a file in the tarball", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8")
    const links = [...readme.matchAll(/\]\(((?!https?:|#)[^)#\s]+)(?:#[^)]*)?\)/g)].map((match) => match[1] as string)
    expect(links.length).toBeGreaterThan(5)
    expect(links.filter((link) => !files.includes(link.replace(/^\.\//, "")))).toEqual([])
  })

  it("installs without a warning", () => {
    expect(install.code, install.stderr).toBe(0)
    expect(install.stderr).not.toMatch(/warn/i)
  })

  it("loads every entry point with require() from CommonJS, and with import", async () => {
    writeFileSync(
      join(app, "probe.cjs"),
      `for (const id of ${JSON.stringify(SUBPATHS)}) { const m = require(id); console.log(id, Object.keys(m).length > 0 && Object.values(m).some((v) => typeof v === "function")) }
       console.log("version", require("llm-worker/package.json").version)`
    )
    writeFileSync(join(app, "probe.mjs"), `for (const id of ${JSON.stringify(SUBPATHS)}) { const m = await import(id); console.log(id, typeof Object.values(m)[0]) }`)
    const required = await run(process.execPath, ["probe.cjs"], app)
    expect(required.stderr).toBe("") // require(esm) is not experimental (no warning) on the supported versions
    expect(required.stdout).toBe(`${SUBPATHS.map((id) => `${id} true`).join("\n")}\nversion 0.1.0\n`)
    const imported = await run(process.execPath, ["probe.mjs"], app)
    expect(imported.stderr).toBe("")
    expect(imported.stdout.trim().split("\n")).toHaveLength(SUBPATHS.length)
  })

  it("type-checks a strict app under customConditions: [\"source\"]; the main entry needs no Node types", async () => {
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc")
    const options = (types: ReadonlyArray<string>) => ({
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      customConditions: ["source"],
      lib: ["ES2023", "DOM"],
      types,
      typeRoots: [join(root, "node_modules", "@types")]
    })
    writeFileSync(
      join(app, "main.mts"),
      `import { createLlmClient, defineTool, Worker, type RunResult } from "llm-worker"
       const worker = Worker.create({ client: createLlmClient({ provider: "ollama", model: "qwen3" }) })
       worker.registerTool(defineTool({ name: "clock", description: "Now", execute: () => new Date().toISOString() }))
       export const result: Promise<RunResult> = worker.lock().run("What time is it?")\n`
    )
    writeFileSync(join(app, "node.mts"), `export { startReplayProvider } from "llm-worker/testing"\nexport { defineIsolatedTool } from "llm-worker/isolated"\n`)
    writeFileSync(join(app, "tsconfig.browser.json"), JSON.stringify({ compilerOptions: options([]), files: ["main.mts"] }))
    writeFileSync(join(app, "tsconfig.node.json"), JSON.stringify({ compilerOptions: options(["node"]), files: ["main.mts", "node.mts"] }))
    const [browser, node] = await Promise.all([
      run(process.execPath, [tsc, "-p", "tsconfig.browser.json"], app),
      run(process.execPath, [tsc, "-p", "tsconfig.node.json"], app)
    ])
    expect(browser.stdout + browser.stderr).toBe("")
    expect(node.stdout + node.stderr).toBe("")
  })
})
