import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { ToolSpec } from "../../src/llm/request.ts"
import { toolNames, ToolNameRejected, type ToolDialect } from "../../src/schema/provider-tools.ts"
import { NEUTRAL_TOOL_NAME } from "../../src/schema/tool-names.ts"

const spec = (name: string): ToolSpec => ({ name, description: "d", inputSchema: { type: "object", properties: {} } })
const dialects: ReadonlyArray<ToolDialect> = ["openai-chat", "openai-responses", "anthropic", "gemini"]

const rejection = (tools: ReadonlyArray<ToolSpec>, dialect: ToolDialect): ToolNameRejected => {
  try {
    toolNames(tools, dialect)
  } catch (error) {
    if (error instanceof ToolNameRejected) return error
    throw error
  }
  throw new Error("expected ToolNameRejected")
}

describe("toolNames", () => {
  it("spells dotted names with underscores for OpenAI and Anthropic and keeps them for Gemini", () => {
    const tools = [spec("fs.read"), spec("search")]
    for (const dialect of ["openai-chat", "openai-responses", "anthropic"] as const) {
      const names = toolNames(tools, dialect)
      expect(names.toWire("fs.read")).toBe("fs_read")
      expect(names.fromWire("fs_read")).toBe("fs.read")
      expect(names.toWire("search")).toBe("search")
    }
    expect(toolNames(tools, "gemini").toWire("fs.read")).toBe("fs.read")
  })

  it("passes names outside the set through unchanged (a model may invent one)", () => {
    expect(toolNames([spec("a.b")], "anthropic").fromWire("made_up")).toBe("made_up")
  })

  it("round-trips every set of distinct neutral names that does not collide (property)", () => {
    const letterFirst = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/)
    fc.assert(
      fc.property(fc.uniqueArray(letterFirst, { maxLength: 12 }), (names) => {
        const underscored = new Set(names.map((n) => n.replaceAll(".", "_")))
        fc.pre(underscored.size === names.length)
        const tools = names.map(spec)
        for (const dialect of dialects) {
          const map = toolNames(tools, dialect)
          for (const name of names) {
            expect(NEUTRAL_TOOL_NAME.test(name)).toBe(true)
            expect(map.fromWire(map.toWire(name))).toBe(name)
            if (dialect !== "gemini") expect(map.toWire(name)).not.toContain(".")
          }
        }
      })
    )
  })

  it("throws ToolNameRejected naming both tools when the mapped names collide", () => {
    const error = rejection([spec("a.b"), spec("a_b")], "openai-chat")
    expect(error._tag).toBe("ToolNameRejected")
    expect(error.provider).toBe("openai-chat")
    expect([error.tool, error.conflictsWith].sort()).toEqual(["a.b", "a_b"])
    // Gemini keeps dots, so the same pair is fine there.
    expect(toolNames([spec("a.b"), spec("a_b")], "gemini").toWire("a_b")).toBe("a_b")
  })

  it("refuses names a provider cannot take and names that are not neutral", () => {
    expect(rejection([spec("1st_tool")], "gemini").tool).toBe("1st_tool")
    expect(rejection([spec(".hidden")], "gemini").provider).toBe("gemini")
    expect(toolNames([spec("1st_tool")], "openai-chat").toWire("1st_tool")).toBe("1st_tool")
    expect(rejection([spec("has space")], "anthropic").message).toContain("not a neutral name")
    expect(rejection([spec("x".repeat(65))], "openai-responses").tool).toHaveLength(65)
    expect(rejection([spec("")], "gemini").tool).toBe("")
  })

  it("returns the cached mapping for the same immutable (frozen) array instance", () => {
    const tools = Object.freeze([Object.freeze({ ...spec("a.b"), inputSchema: Object.freeze({ type: "object", properties: Object.freeze({}) }) })])
    expect(toolNames(tools, "anthropic")).toBe(toolNames(tools, "anthropic"))
    expect(toolNames([...tools], "anthropic")).not.toBe(toolNames(tools, "anthropic"))
  })
})
