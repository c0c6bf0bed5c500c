import { describe, expect, it } from "vitest"
import { z } from "zod"
import { makeArgumentCodec } from "../../src/schema/codec.ts"

describe("string formats the model is shown are enforced", () => {
  it("checks standard formats in a raw JSON Schema", () => {
    const codec = makeArgumentCodec({
      type: "object",
      properties: { when: { type: "string", format: "date-time" }, mail: { type: "string", format: "email" } },
      required: ["when"],
      additionalProperties: false
    })
    expect(codec.decode({ when: "2026-11-30T10:00:00Z", mail: "ada@example.org" })).toMatchObject({ ok: true })
    const refused = codec.decode({ when: "tomorrow" })
    expect(refused).toMatchObject({ ok: false, issues: [{ path: ["when"] }] })
    expect(codec.decode({ when: "2026-11-30T10:00:00Z", mail: "not an address" })).toMatchObject({ ok: false })
  })

  it("ignores formats it does not know instead of failing the schema", () => {
    const codec = makeArgumentCodec({ type: "object", properties: { x: { type: "string", format: "x-vendor" } } })
    expect(codec.decode({ x: "anything" })).toMatchObject({ ok: true })
  })

  it("agrees with zod 4 on a uuid field", () => {
    const codec = makeArgumentCodec(z.object({ id: z.uuid() }))
    expect(codec.decode({ id: "6f1c1f0e-4a3b-4c1d-9e2f-1a2b3c4d5e6f" })).toMatchObject({ ok: true })
    expect(codec.decode({ id: "123" })).toMatchObject({ ok: false })
  })
})

describe("compilation", () => {
  it("refuses an invalid JSON Schema at definition time, before any call", async () => {
    const { UnsupportedSchemaError } = await import("../../src/schema/normalize.ts")
    expect(() => makeArgumentCodec({ type: "object", properties: { a: { type: "strin" } } })).toThrow(UnsupportedSchemaError)
    expect(() => makeArgumentCodec({ type: "object", properties: { a: { minimum: "one" } } })).toThrow(UnsupportedSchemaError)
  })

  it("shares one validator between identical schemas and still checks each value", () => {
    const schema = { type: "object", properties: { n: { type: "integer", maximum: 3 } }, additionalProperties: false } as const
    const first = makeArgumentCodec(schema)
    const second = makeArgumentCodec({ additionalProperties: false, properties: { n: { maximum: 3, type: "integer" } }, type: "object" })
    expect(first.decode({ n: 2 })).toMatchObject({ ok: true })
    expect(second.decode({ n: 4 })).toMatchObject({ ok: false, issues: [{ path: ["n"] }] })
    expect(first.decode({ n: 1, extra: true })).toMatchObject({ ok: false })
  })
})
