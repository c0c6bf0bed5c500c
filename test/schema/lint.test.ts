import { describe, expect, it } from "vitest"
import type { ToolSpec } from "../../src/llm/request.ts"
import type { JsonSchema } from "../../src/schema/json-schema.ts"
import { lintToolSet, lintToolSpec, type SchemaLint } from "../../src/schema/lint.ts"
import { goldenTools } from "../fixtures/tool-definitions/tool-set.ts"

const tool = (inputSchema: JsonSchema, name = "t", description = "Does t."): ToolSpec => ({ name, description, inputSchema })
const closed = (properties: Record<string, JsonSchema>): JsonSchema => ({
  type: "object",
  properties,
  required: Object.keys(properties),
  additionalProperties: false
})
const brief = (findings: ReadonlyArray<SchemaLint>) => findings.map((f) => `${f.provider} ${f.severity} ${f.path}`)

describe("lintToolSpec", () => {
  it("finds nothing in a schema every provider takes whole", () => {
    expect(lintToolSpec(tool(closed({ q: { type: "string", description: "query" } })))).toEqual([])
  })

  it("errors for every provider when the root is not an object schema", () => {
    const findings = lintToolSpec(tool({ type: "string" }))
    expect(brief(findings)).toEqual(["openai-chat error ", "openai-responses error ", "anthropic error ", "gemini error "])
    expect(findings.every((f) => f._tag === "SchemaLint" && f.tool === "t")).toBe(true)
  })

  it("warns that a record or an open object sends OpenAI strict:false", () => {
    const findings = lintToolSpec(
      tool(closed({ r: { type: "object", additionalProperties: { type: "string" } }, o: { type: "object", properties: {} } })),
      { targets: ["openai-chat"] }
    )
    expect(brief(findings)).toEqual(["openai-chat warning /properties/r", "openai-chat warning /properties/o"])
    expect(findings[0]?.message).toContain("strict: false")
    expect(findings[0]?.message).toContain("record")
    expect(findings[1]?.message).toContain("open object")
  })

  it("warns about keywords Gemini ignores and ones OpenAI strict lacks", () => {
    const schema = closed({ s: { type: "string", minLength: 2 }, n: { type: "number", multipleOf: 2 } })
    expect(brief(lintToolSpec(tool(schema), { targets: ["gemini", "openai-responses", "anthropic"] }))).toEqual([
      "gemini warning /properties/s",
      "gemini warning /properties/n",
      "openai-responses warning /properties/s"
    ])
  })

  it("reports the Gemini OpenAPI-subset losses, an error when a required member cannot be declared", () => {
    const findings = lintToolSpec(
      tool(closed({ u: { oneOf: [{ type: "string" }, { type: "integer" }] }, r: { type: "object", additionalProperties: { type: "string" } } })),
      { targets: ["gemini-subset"] }
    )
    expect(brief(findings)).toEqual([
      "gemini-subset warning /properties/u",
      "gemini-subset warning /properties/r",
      "gemini-subset error /properties/r"
    ])
  })

  it("errors for names a provider cannot take, per provider", () => {
    expect(brief(lintToolSpec(tool(closed({}), "9lives")))).toEqual(["gemini error "])
    expect(brief(lintToolSpec(tool(closed({}), "bad name")))).toHaveLength(4)
  })

  it("warns when Gemini gets no description", () => {
    expect(brief(lintToolSpec(tool(closed({}), "t", " "), { targets: ["gemini"] }))).toEqual(["gemini warning "])
  })
})

describe("lintToolSet", () => {
  it("adds an error when two names collide on a provider", () => {
    const findings = lintToolSet([tool(closed({}), "a.b"), tool(closed({}), "a_b")])
    expect(brief(findings)).toEqual(["openai-chat error ", "openai-responses error ", "anthropic error "])
    expect(findings[0]?.message).toContain("a_b")
  })

  it("lints the golden set: only the record in calendar.create_event costs OpenAI strict mode", () => {
    expect(brief(lintToolSet(goldenTools))).toEqual([
      "openai-chat warning /properties/labels",
      "openai-responses warning /properties/labels"
    ])
  })
})
