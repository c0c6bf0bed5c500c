import { execFile } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { normaliseOutput } from "./normalise-output.ts"

/**
 * The guides embed their examples verbatim, and the examples are real programs. Both facts are checked here:
 * every `<!-- example: … -->` block must equal its file byte for byte, and every example must run offline
 * (against the replay provider or a scripted client, never the network) and print exactly the guide's
 * `<!-- output: … -->` block, so the guide text is the checked output. Only what truly varies between runs or
 * machines is normalised (`normalise-output.ts`: the ephemeral port, V8's JSON.parse wording), and the guide
 * shows it as the placeholder the normaliser writes.
 */

const root = fileURLToPath(new URL("../..", import.meta.url))
const guidesDir = join(root, "docs", "guides")
const examplesDir = join(root, "docs", "examples")

interface Embedded {
  readonly guide: string
  readonly example: string
  readonly code: string
}

const MARKER = /<!-- example: docs\/examples\/([\w.-]+\.ts) -->\n```ts\n([\s\S]*?)```\n<!-- \/example -->/g
const OUTPUT = /<!-- output: docs\/examples\/([\w.-]+\.ts) -->\n```text\n([\s\S]*?)```\n<!-- \/output -->/g

const guides = readdirSync(guidesDir).filter((name) => name.endsWith(".md")).sort()
const embedded: ReadonlyArray<Embedded> = guides.flatMap((guide) => {
  const text = readFileSync(join(guidesDir, guide), "utf8")
  const found = [...text.matchAll(MARKER)].map((m) => ({ guide, example: m[1] as string, code: m[2] as string }))
  // A marker the pattern did not match (a typo, a missing fence) would otherwise escape the check.
  expect(found.length, `${guide}: malformed example marker`).toBe(text.split("<!-- example:").length - 1)
  return found
})
/** Each example's printed output as its guide states it. */
const outputs: ReadonlyMap<string, string> = new Map(
  guides.flatMap((guide) => {
    const text = readFileSync(join(guidesDir, guide), "utf8")
    const found = [...text.matchAll(OUTPUT)].map((m) => [m[1] as string, m[2] as string] as const)
    expect(found.length, `${guide}: malformed output marker`).toBe(text.split("<!-- output:").length - 1)
    return found
  })
)
const examples = readdirSync(examplesDir).filter((name) => name.endsWith(".ts")).sort()

const run = (file: string): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    const env = { ...process.env, OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", GEMINI_API_KEY: "", GOOGLE_API_KEY: "" }
    execFile(process.execPath, ["--conditions=@llm-worker/source", "--import", "tsx", join("docs", "examples", file)], { cwd: root, env, timeout: 150_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr })
    )
  })

describe("docs: guides embed their examples verbatim", () => {
  it("every example is embedded in some guide, and every embed names an existing example", () => {
    expect(new Set(embedded.map((e) => e.example))).toEqual(new Set(examples))
  })
  it.each(examples)("%s is short enough to read in a guide (at most 60 lines)", (file) => {
    expect(readFileSync(join(examplesDir, file), "utf8").trimEnd().split("\n").length).toBeLessThanOrEqual(60)
  })
  it.each(embedded.map((e) => [e.guide, e.example, e.code] as const))("%s embeds %s byte for byte", (_guide, example, code) => {
    expect(code).toBe(readFileSync(join(examplesDir, example), "utf8"))
  })
})

describe("docs: examples run offline and print what the guides say", () => {
  it("every example has exactly one output block in the guides", () => {
    const blocks = guides.flatMap((guide) => [...readFileSync(join(guidesDir, guide), "utf8").matchAll(OUTPUT)].map((m) => m[1] as string))
    expect(blocks.sort()).toEqual(examples)
  })
  it.concurrent.each(examples)("%s", async (file) => {
    const { code, stdout, stderr } = await run(file)
    expect(stderr, `${file} wrote to stderr`).toBe("")
    expect(code, `${file} exited with ${code}\n${stdout}`).toBe(0)
    expect(normaliseOutput(stdout)).toBe(outputs.get(file))
  }, 180_000) // each example is a fresh Node process compiling TypeScript; a dozen share two cores
})

describe("docs: relative links resolve", () => {
  const pages = [
    join(root, "docs", "architecture.md"),
    ...guides.map((guide) => join(guidesDir, guide)),
    ...readdirSync(join(root, "docs", "decisions")).filter((name) => name.endsWith(".md")).map((name) => join(root, "docs", "decisions", name))
  ]
  it.each(pages.map((page) => [page.slice(root.length)] as const))("%s", (page) => {
    const text = readFileSync(join(root, page), "utf8")
    const targets = [...text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1] as string).filter((t) => !/^[a-z]+:/.test(t))
    const broken = targets.filter((target) => !existsSync(join(dirname(join(root, page)), target)))
    expect(broken).toEqual([])
  })
})
