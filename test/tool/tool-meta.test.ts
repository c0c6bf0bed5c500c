import { Equal } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { InvalidToolName, ToolMeta } from "../../src/tool/tool-meta.ts"

describe("ToolMeta", () => {
  it("builds new values and never mutates the original", () => {
    const base = ToolMeta.make("search")
    const described = base.description("Search the docs")
    const schema = { type: "object", properties: { q: { type: "string" } }, required: ["q"] }
    const full = described.inputSchema(schema)
    expect(base.descriptionText).toBe("")
    expect(described.descriptionText).toBe("Search the docs")
    expect(full.schema).toEqual(schema)
    expect(described.schema).toEqual({ type: "object", properties: {}, additionalProperties: false })
  })

  it("is frozen, deeply, and isolated from later edits of the schema argument", () => {
    const schema = { type: "object", properties: { q: { type: "string" } } }
    const meta = ToolMeta.make("search").inputSchema(schema)
    schema.properties.q.type = "number"
    expect((meta.schema as { properties: { q: { type: string } } }).properties.q.type).toBe("string")
    expect(Object.isFrozen(meta)).toBe(true)
    expect(() => {
      ;(meta as unknown as { name: string }).name = "other"
    }).toThrow(TypeError)
    expect(() => {
      ;(meta.schema as unknown as { type: string }).type = "array"
    }).toThrow(TypeError)
  })

  it("compares structurally", () => {
    const a = ToolMeta.make("t").description("d").inputSchema({ type: "object", properties: { a: { type: "string" } } })
    const b = ToolMeta.make("t").description("d").inputSchema({ properties: { a: { type: "string" } }, type: "object" })
    const c = a.description("other")
    expect(Equal.equals(a, b)).toBe(true)
    expect(a.equals(b)).toBe(true)
    expect(Equal.equals(a, c)).toBe(false)
  })

  it.each(["", "a b", "ünïcode", "x".repeat(65), "semi;colon", "slash/name"])("refuses the name %j", (name) => {
    expect(() => ToolMeta.make(name)).toThrow(InvalidToolName)
  })

  it.each(["a", "get_weather", "fs.read", "my-tool", "A1", "x".repeat(64)])("accepts the name %j", (name) => {
    expect(ToolMeta.make(name).name).toBe(name)
  })

  it("accepts exactly the names matching [A-Za-z0-9_.-]{1,64}", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 70 }), (name) => {
        const valid = /^[A-Za-z0-9_.-]{1,64}$/.test(name)
        let accepted = true
        try {
          ToolMeta.make(name)
        } catch (e) {
          expect(e).toBeInstanceOf(InvalidToolName)
          accepted = false
        }
        expect(accepted).toBe(valid)
      })
    )
  })
})
