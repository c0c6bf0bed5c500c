import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runToBodyOrPending } from "../../../src/remote/plugin/callback-result.ts"
import { remoteFailure, toolFailure } from "../../../src/remote/plugin/index.ts"

/**
 * A synchronous handler is answered without a promise (decision 0078); the body must be the one the same handler
 * would get when it answers asynchronously, whatever it returns or throws.
 */

const context = { signal: new AbortController().signal }

const outcome = fc.oneof(
  fc.record({ kind: fc.constant("value" as const), value: fc.jsonValue({ maxDepth: 4 }) }),
  fc.record({ kind: fc.constant("undefined" as const) }),
  fc.record({ kind: fc.constant("remoteFailure" as const), error: fc.string(), output: fc.option(fc.jsonValue({ maxDepth: 3 }), { nil: undefined }) }),
  fc.record({ kind: fc.constant("toolFailure" as const), message: fc.string() }),
  fc.record({ kind: fc.constant("throw" as const), name: fc.constantFrom("Error", "TypeError", "CityNotFound", ""), message: fc.string() }),
  fc.record({ kind: fc.constant("throwValue" as const), value: fc.jsonValue({ maxDepth: 2 }) })
)

type Outcome = typeof outcome extends fc.Arbitrary<infer T> ? T : never

const produce = (o: Outcome): unknown => {
  switch (o.kind) {
    case "value":
      return o.value
    case "undefined":
      return undefined
    case "remoteFailure":
      return remoteFailure(o.error, o.output)
    case "toolFailure":
      return toolFailure(o.message)
    case "throw": {
      const error = new Error(o.message)
      if (o.name !== "") error.name = o.name
      throw error
    }
    case "throwValue":
      throw o.value
  }
}

describe("runToBodyOrPending", () => {
  it("answers a synchronous handler at once with the body its asynchronous twin resolves to", async () => {
    await fc.assert(
      fc.asyncProperty(outcome, async (o) => {
        const sync = runToBodyOrPending({ handler: () => produce(o) }, {}, context)
        expect(sync).not.toBeInstanceOf(Promise)
        const pending = runToBodyOrPending({ handler: async () => produce(o) }, {}, context)
        expect(pending).toBeInstanceOf(Promise)
        expect(sync).toEqual(await pending)
      }),
      { numRuns: 300 }
    )
  })
})
