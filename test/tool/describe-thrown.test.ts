import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { DEFAULT_DESCRIBED_CHARS, describeThrown } from "../../src/tool/describe-thrown.ts"
import { toToolError } from "../../src/tool/tool-constructors.ts"
import { ExecutionFailed, InvalidArgument, ToolError } from "../../src/tool/tool-error.ts"
import { hostileValues } from "./hostile-values.ts"

/** The bound a clipped description can reach: the kept prefix plus the "… (N more characters)" note. */
const BOUND = DEFAULT_DESCRIBED_CHARS + 40

describe("describeThrown", () => {
  it.each(hostileValues())("never throws and stays bounded: %s", (_label, value) => {
    const text = describeThrown(value)
    expect(typeof text).toBe("string")
    expect(text.length).toBeGreaterThan(0)
    expect(text.length).toBeLessThanOrEqual(BOUND)
  })

  it("keeps the readable forms", () => {
    expect(describeThrown(new Error("disk full"))).toBe("disk full")
    expect(describeThrown(Object.assign(new Error(""), { name: "Oops" }))).toBe("Oops")
    expect(describeThrown("plain")).toBe("plain")
    expect(describeThrown({ code: 7 })).toBe('{"code":7}')
    expect(describeThrown(Symbol("sym"))).toBe("Symbol(sym)")
    expect(describeThrown(undefined)).toBe("undefined")
    expect(describeThrown(Object.create(null))).toBe("{}")
    expect(describeThrown(new Error("m".repeat(100_000)))).toMatch(/^m+… \(\d+ more characters\)$/)
  })

  it("says so when nothing about the value can be read", () => {
    const { proxy, revoke } = Proxy.revocable({}, {})
    revoke()
    expect(describeThrown(proxy)).toBe("a thrown value that cannot be described")
  })

  it("never throws for arbitrary values (property)", () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withBoxedValues: true, withMap: true, withSet: true, withNullPrototype: true }), (value) => {
        expect(typeof describeThrown(value)).toBe("string")
      })
    )
  })
})

describe("toToolError", () => {
  it("passes genuine tool errors through and describes everything else as ExecutionFailed", () => {
    const invalid = new InvalidArgument({ message: "bad" })
    expect(toToolError(invalid)).toBe(invalid)
    for (const [, value] of hostileValues()) {
      const error = toToolError(value)
      expect(ToolError.is(error)).toBe(true)
      expect(typeof error.message).toBe("string")
    }
  })

  it("does not trust look-alikes: a Proxy claiming to be a ToolError is described, not passed through", () => {
    const forged = new Proxy(new ExecutionFailed({ message: "real" }), {
      get: (target, key) => (key === "message" ? (() => { throw new Error("gotcha") })() : Reflect.get(target, key))
    })
    expect(ToolError.is(forged)).toBe(false)
    const error = toToolError(forged)
    expect(error).toBeInstanceOf(ExecutionFailed)
    expect(error).not.toBe(forged)
  })

  it("ToolError.is never throws", () => {
    for (const [, value] of hostileValues()) expect(ToolError.is(value)).toBe(false)
  })
})
