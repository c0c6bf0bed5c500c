import fc from "fast-check"
import { fullFormats } from "ajv-formats/dist/formats.js"
import { FORMAT_MAX_LENGTH, isBase64 } from "../../src/schema/sources/bounded-formats.ts"
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

describe("format checks read a bounded length (hostile strings of megabytes)", () => {
  const codecFor = (format: string) => makeArgumentCodec({ type: "object", properties: { s: { type: "string", format } }, required: ["s"] })

  it.each([
    ["email", "ada@example.org", "a.".repeat(2 << 20) + "@"],
    ["uri", "https://example.org/a?b=c", `http://${"a".repeat(4 << 20)} `],
    ["hostname", "example.org", "a-".repeat(1 << 20)],
    ["date-time", "2026-11-30T10:00:00Z", `2026-11-30T${"1".repeat(1 << 20)}`]
  ])("%s: a valid value passes; a 2-8 MiB one is refused as too long, not checked", (format, valid, hostile) => {
    const codec = codecFor(format)
    expect(codec.decode({ s: valid })).toMatchObject({ ok: true })
    const refused = codec.decode({ s: hostile })
    expect(refused).toMatchObject({ ok: false, issues: [{ path: ["s"], message: `expected a ${format} of at most ${FORMAT_MAX_LENGTH[format]} characters, got ${hostile.length}` }] })
  })

  it("a value of ordinary length that fails says which format it needed", () => {
    expect(codecFor("email").decode({ s: "not an address" })).toMatchObject({ ok: false, issues: [{ path: ["s"], message: 'expected a string of format email, got "not an address"' }] })
    expect(codecFor("constructor").decode({ s: "x" })).toMatchObject({ ok: true })
  })

  it("byte (base64): the one-pass check accepts what ajv-formats' expression accepts on one line, and no more", () => {
    // ajv-formats' expression has the `m` flag, so it accepts any text with one valid line ("junk\nQUJD"); a
    // base64 value is one line (RFC 4648 section 3.1), and the one-pass check says so.
    const expression = fullFormats.byte as (value: string) => boolean
    const alphabet = fc.constantFrom(..."ABCXYZabcxyz0189+/=-_ \n".split(""))
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 24 }).map((chars) => chars.join("")), (value) =>
        value.includes("\n") ? !isBase64(value) : isBase64(value) === expression(value)
      ),
      { numRuns: 5000 }
    )
    expect([isBase64("junk\nQUJD"), expression("junk\nQUJD")]).toEqual([false, true])
    expect(codecFor("byte").decode({ s: "QUJD".repeat(1 << 20) })).toMatchObject({ ok: true })
    expect(codecFor("byte").decode({ s: `${"QUJD".repeat(1 << 20)}!` })).toMatchObject({ ok: false })
  })

  it("formatMinimum on dates still compares", () => {
    const codec = makeArgumentCodec({ type: "object", properties: { d: { type: "string", format: "date", formatMinimum: "2026-01-01" } } })
    expect(codec.decode({ d: "2026-06-01" })).toMatchObject({ ok: true })
    expect(codec.decode({ d: "2025-06-01" })).toMatchObject({ ok: false })
  })
})
