import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { memoOf } from "../../src/llm/item-memo.ts"
import { InvalidItem, ownItem } from "../../src/worker/owned-items.ts"
import { type ToolOutcome, type ToolResultStatus, ownedOutputItem, toOutputItem } from "../../src/worker/tool-outcome.ts"

/**
 * The turn loop records each outcome as `ownedOutputItem(outcome)`, built once, instead of `ownItem(toOutputItem(
 * outcome))`, built and then copied: both must give the same history item — equal, frozen, owned (so `ownItem`
 * passes it through) — and an outcome that is not the Worker's own data must fail as the checked copy fails.
 */

const statuses: ReadonlyArray<ToolResultStatus> = ["ok", "error", "timeout", "cancelled", "skipped", "denied"]

const outcomes: fc.Arbitrary<ToolOutcome> = fc.record({
  callId: fc.string({ unit: "grapheme", maxLength: 40 }),
  name: fc.string({ maxLength: 20 }),
  status: fc.constantFrom(...statuses),
  output: fc.oneof(fc.string({ unit: "binary", maxLength: 200 }), fc.string({ maxLength: 5 })),
  isError: fc.boolean()
})

describe("ownedOutputItem", () => {
  it("gives what ownItem(toOutputItem(outcome)) gives: equal, frozen, owned", () => {
    fc.assert(
      fc.property(outcomes, (outcome) => {
        const built = ownedOutputItem(outcome)
        const copied = ownItem(toOutputItem(outcome))
        expect(built).toEqual(copied)
        expect(Object.keys(built)).toEqual(Object.keys(copied))
        expect(Object.isFrozen(built)).toBe(true)
        expect(memoOf(built)).toBeDefined()
        expect(ownItem(built)).toBe(built)
      })
    )
  })

  it("refuses what the checked copy refuses, with the same error", () => {
    const hostile = fc.record({
      callId: fc.oneof(fc.string(), fc.integer(), fc.constant(undefined)),
      name: fc.string(),
      status: fc.constantFrom(...statuses),
      output: fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.constant({ toString: () => "x" })),
      isError: fc.oneof(fc.boolean(), fc.constant("yes"), fc.constant(1))
    })
    fc.assert(
      fc.property(hostile, (value) => {
        const outcome = value as unknown as ToolOutcome
        const expected = (() => {
          try {
            return { item: ownItem(toOutputItem(outcome)) }
          } catch (thrown) {
            return { thrown }
          }
        })()
        if ("thrown" in expected) {
          expect(expected.thrown).toBeInstanceOf(InvalidItem)
          expect(() => ownedOutputItem(outcome)).toThrow((expected.thrown as Error).message)
        } else {
          expect(ownedOutputItem(outcome)).toEqual(expected.item)
        }
      })
    )
  })
})
