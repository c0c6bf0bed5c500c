import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { geminiSubsetToolsFragment, toolsFragment, type ToolDialect } from "../../src/schema/provider-tools.ts"
import { goldenTools } from "../fixtures/tool-definitions/tool-set.ts"

/** Golden files hold the exact bytes; run with UPDATE_GOLDEN=1 to rewrite them after a deliberate change. */
const golden = (file: string, actual: string): void => {
  const path = fileURLToPath(new URL(`../fixtures/tool-definitions/${file}`, import.meta.url))
  if (process.env["UPDATE_GOLDEN"] === "1") writeFileSync(path, actual + "\n")
  expect(actual + "\n").toBe(readFileSync(path, "utf8"))
}

const dialects: ReadonlyArray<ToolDialect> = ["openai-chat", "openai-responses", "anthropic", "gemini"]

describe("golden tool definitions", () => {
  for (const dialect of dialects) {
    it(`${dialect} fragment matches ${dialect}.json byte for byte`, () => {
      golden(`${dialect}.json`, toolsFragment(goldenTools, dialect))
    })
  }

  it("gemini OpenAPI-subset fragment matches gemini-subset.json", () => {
    golden("gemini-subset.json", geminiSubsetToolsFragment(goldenTools))
  })

  it("every fragment is valid JSON listing the tools sorted by neutral name", () => {
    const neutral = ["calendar.create_event", "fs.read_file", "search_web"]
    const chat = JSON.parse(toolsFragment(goldenTools, "openai-chat")) as Array<{ function: { name: string } }>
    expect(chat.map((t) => t.function.name)).toEqual(neutral.map((n) => n.replaceAll(".", "_")))
    const anthropic = JSON.parse(toolsFragment(goldenTools, "anthropic")) as Array<{ name: string }>
    expect(anthropic.map((t) => t.name)).toEqual(neutral.map((n) => n.replaceAll(".", "_")))
    const gemini = JSON.parse(toolsFragment(goldenTools, "gemini")) as Array<{
      functionDeclarations: Array<{ name: string }>
    }>
    expect(gemini).toHaveLength(1)
    expect(gemini[0]?.functionDeclarations.map((d) => d.name)).toEqual(neutral)
  })
})
