import { afterEach, describe, expect, it } from "vitest"
import {
  compileJsonSchema,
  DEFAULT_SHARED_VALIDATORS,
  limitSharedValidators,
  sharedValidatorCount
} from "../../src/schema/sources/ajv-validator.ts"
import type { JsonSchema } from "../../src/schema/json-schema.ts"

// Each schema differs in its property name, as plugins re-registering new shapes would.
const schemaNamed = (name: string): JsonSchema =>
  ({ type: "object", properties: { [name]: { type: "integer", minimum: 1 } }, required: [name], additionalProperties: false }) as JsonSchema

afterEach(() => limitSharedValidators(DEFAULT_SHARED_VALIDATORS))

describe("the shared validator cache", () => {
  it("stays within its limit however many distinct schemas are compiled, and evicted validators keep working", () => {
    limitSharedValidators(8)
    const checks = Array.from({ length: 50 }, (_, i) => {
      const name = `field_${i}_${Math.random().toString(36).slice(2)}`
      const check = compileJsonSchema(schemaNamed(name))
      // First use compiles (lazily) and shares.
      expect(check({ [name]: 2 }, 2)).toBeUndefined()
      return { name, check }
    })
    expect(sharedValidatorCount()).toBeLessThanOrEqual(8)
    // The first tools' validators were evicted from the share long ago; they still check, both ways.
    for (const { name, check } of checks) {
      expect(check({ [name]: 2 }, 2)).toBeUndefined()
      expect(check({ [name]: 0 }, 2)?.issues[0]?.message).toMatch(/>= 1/)
    }
  })

  it("shares one compilation between identical schemas while it is held", () => {
    limitSharedValidators(4)
    const name = `same_${Math.random().toString(36).slice(2)}`
    const before = sharedValidatorCount()
    const a = compileJsonSchema(schemaNamed(name))
    const b = compileJsonSchema(schemaNamed(name))
    expect(a({ [name]: 1 }, 2)).toBeUndefined()
    expect(b({ [name]: 1 }, 2)).toBeUndefined()
    expect(sharedValidatorCount() - before).toBeLessThanOrEqual(1)
  })

  it("evicts at once when lowered, and 0 turns sharing off without breaking checks", () => {
    limitSharedValidators(16)
    for (let i = 0; i < 10; i++) {
      const name = `low_${i}_${Math.random().toString(36).slice(2)}`
      compileJsonSchema(schemaNamed(name))({ [name]: 3 }, 2)
    }
    limitSharedValidators(2)
    expect(sharedValidatorCount()).toBeLessThanOrEqual(2)
    limitSharedValidators(0)
    expect(sharedValidatorCount()).toBe(0)
    const check = compileJsonSchema(schemaNamed("off"))
    expect(check({ off: 5 }, 2)).toBeUndefined()
    expect(check({ off: "5" }, 2)).toBeDefined()
    expect(sharedValidatorCount()).toBe(0)
  })

  it("refuses a limit that is not a whole number ≥ 0", () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => limitSharedValidators(bad)).toThrow(RangeError)
    }
  })
})
