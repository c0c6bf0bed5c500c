import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/**
 * The API reference is built here exactly as `npm run docs:api` builds it (typedoc.json: every entry point's
 * declarations, warnings as errors, `notDocumented` validation), into a temporary folder, so CI fails on a TypeDoc
 * warning, a broken `{@link}`, a public type that is referenced but not exported, or an export without JSDoc.
 * TypeDoc's JSON output is then read to say precisely which export lacks documentation or an example.
 *
 * One TypeDoc run costs about 11 s of CPU (TypeScript 6 checking the declarations against Effect's and zod's);
 * it runs once for all the assertions below, in parallel with the rest of the suite.
 */

const root = fileURLToPath(new URL("../..", import.meta.url))
const typedoc = join(root, "tools", "typedoc", "node_modules", "typedoc", "bin", "typedoc")

interface Comment {
  readonly summary?: ReadonlyArray<{ readonly text: string }>
  readonly blockTags?: ReadonlyArray<{ readonly tag: string }>
}
interface Reflection {
  readonly id: number
  readonly name: string
  /** Set on a re-export of a symbol another entry point documents (`variant: "reference"`): that symbol's id. */
  readonly target?: number
  readonly comment?: Comment
  readonly signatures?: ReadonlyArray<{ readonly comment?: Comment }>
  readonly getSignature?: { readonly comment?: Comment }
  readonly children?: ReadonlyArray<Reflection>
}

const comments = (reflection: Reflection): ReadonlyArray<Comment> =>
  [reflection.comment, ...(reflection.signatures ?? []).map((signature) => signature.comment), reflection.getSignature?.comment].filter(
    (comment): comment is Comment => comment !== undefined
  )
const documented = (reflection: Reflection): boolean =>
  comments(reflection).some((comment) => (comment.summary ?? []).some((part) => part.text.trim() !== ""))
const hasExample = (reflection: Reflection): boolean =>
  comments(reflection).some((comment) => (comment.blockTags ?? []).some((tag) => tag.tag === "@example"))

describe("the API reference", () => {
  const out = mkdtempSync(join(tmpdir(), "llm-worker-api-"))
  let run: { readonly code: number | null; readonly output: string }
  let modules: ReadonlyArray<Reflection>

  beforeAll(async () => {
    expect(existsSync(typedoc), "tools/typedoc is installed by `npm test` (scripts/ensure-installed.mjs --with-typedoc)").toBe(true)
    run = await new Promise((resolve) =>
      execFile(
        process.execPath,
        [typedoc, "--out", join(out, "html"), "--json", join(out, "api.json")],
        { cwd: root, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, output: stdout + stderr })
      )
    )
    modules = run.code === 0 ? (JSON.parse(readFileSync(join(out, "api.json"), "utf8")) as Reflection).children ?? [] : []
  }, 240_000)
  afterAll(() => rm(out, { recursive: true, force: true }), 120_000)

  it("builds from the entry points' declarations with no TypeDoc warning", () => {
    expect(run.output.replace(/\u001b\[[0-9;]*m/g, "")).not.toMatch(/\[(warning|error)\]/)
    expect(run.code).toBe(0)
    expect(existsSync(join(out, "html", "index.html"))).toBe(true)
    // One module per entry point of typedoc.json: `dist/index.d.ts` is "index", `dist/<path>/index.d.ts` is "<path>"
    // (`remote/plugin` for the nested subpath).
    const entryPoints = (JSON.parse(readFileSync(join(root, "typedoc.json"), "utf8")) as { readonly entryPoints: ReadonlyArray<string> }).entryPoints
    const expected = entryPoints.map((path) => (path === "dist/index.d.ts" ? "index" : path.replace(/^dist\//, "").replace(/\/index\.d\.ts$/, "")))
    expect(expected).toContain("index")
    expect(modules.map((module) => module.name).sort()).toEqual([...expected].sort())
  })

  it("documents every public export of every entry point", () => {
    // A symbol exported by two entry points is documented once; the second export is a reference to the first.
    const byId = new Map(modules.flatMap((module) => module.children ?? []).map((exported) => [exported.id, exported] as const))
    const resolved = (exported: Reflection): Reflection => (exported.target === undefined ? exported : (byId.get(exported.target) ?? exported))
    const undocumented = modules.flatMap((module) =>
      (module.children ?? []).filter((exported) => !documented(resolved(exported))).map((exported) => `${module.name}.${exported.name}`)
    )
    expect(undocumented).toEqual([])
    // Many more than the 210 of the issue: the types public signatures name are exported too now.
    expect(modules.reduce((sum, module) => sum + (module.children ?? []).length, 0)).toBeGreaterThan(250)
  })

  it("gives the main entry points an example", () => {
    const index = modules.find((module) => module.name === "index")
    const find = (name: string): Reflection | undefined => index?.children?.find((exported) => exported.name === name)
    const member = (owner: string, name: string): Reflection | undefined => find(owner)?.children?.find((m) => m.name === name)
    const main: ReadonlyArray<readonly [string, Reflection | undefined]> = [
      ["defineTool", find("defineTool")],
      ["Worker", find("Worker")],
      ["createLlmClient", find("createLlmClient")],
      ["ToolServer", find("ToolServer")],
      ["PreToolCall", find("PreToolCall")],
      ["toolFailure", find("toolFailure")],
      ...(["registerTool", "lock", "run", "subscribe", "addHook"] as const).map((name) => [`MutableWorker.${name}`, member("MutableWorker", name)] as const)
    ]
    // The subpath entries' main functions: what a user of each subpath starts from.
    const inModule = (module: string, name: string): readonly [string, Reflection | undefined] =>
      [`${module}.${name}`, modules.find((m) => m.name === module)?.children?.find((exported) => exported.name === name)] as const
    const subpaths = [
      inModule("remote", "startToolHost"),
      inModule("remote/plugin", "startPlugin"),
      inModule("remote/plugin", "remoteTool"),
      inModule("remote/plugin", "llmTool"),
      inModule("plugin-llm", "createPluginLlm"),
      inModule("plugin-llm", "createPluginRuntime"),
      inModule("plugin-llm", "PluginLlm")
    ]
    expect([...main, ...subpaths].filter(([, reflection]) => reflection === undefined || !hasExample(reflection)).map(([name]) => name)).toEqual([])
  })
})
