import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { MAX_BODY_DEPTH, jsonBody, rawJson } from "../../src/llm/json-body.ts"
import type { JsonBodyValue } from "../../src/llm/json-body.ts"

describe("jsonBody", () => {
  it("keeps insertion order, omits undefined fields and splices raw fragments", () => {
    const text = jsonBody({ z: 1, a: undefined, m: [true, null, "x\n"], t: rawJson('[{"k":2}]'), o: { b: 0.5 } })
    expect(text).toBe('{"z":1,"m":[true,null,"x\\n"],"t":[{"k":2}],"o":{"b":0.5}}')
  })

  it("refuses non-finite numbers and holes instead of writing null", () => {
    expect(() => jsonBody({ a: { b: Number.NaN } })).toThrow(/\$\.a\.b/)
    expect(() => jsonBody({ a: [1, undefined as unknown as number] })).toThrow(/\$\.a\[1\]/)
  })

  it("agrees with JSON.stringify on plain JSON values", () => {
    fc.assert(
      fc.property(fc.jsonValue({ noUnicodeString: false }), (value) => {
        // JSON.stringify turns -0 into 0 as well, so no normalisation is needed.
        expect(jsonBody(value as never)).toBe(JSON.stringify(value))
      })
    )
  })

  it("refuses nesting past MAX_BODY_DEPTH with a RangeError naming it, never a stack overflow", () => {
    let deep: JsonBodyValue = 1
    for (let i = 0; i < 100_000; i++) deep = i % 2 === 0 ? [deep] : { a: deep }
    expect(() => jsonBody(deep)).toThrow(RangeError)
    expect(() => jsonBody(deep)).toThrow(`nested deeper than ${MAX_BODY_DEPTH} levels`)
    let ok: JsonBodyValue = 1
    for (let i = 0; i < MAX_BODY_DEPTH; i++) ok = [ok]
    expect(jsonBody(ok)).toBe(`${"[".repeat(MAX_BODY_DEPTH)}1${"]".repeat(MAX_BODY_DEPTH)}`)
    // A raw fragment is spliced, not walked: its producer bounds it.
    expect(jsonBody([rawJson("[[[]]]")])).toBe("[[[[]]]]")
  })
})
