import { Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { jsonSchema } from "../../src/schema/codec.ts"
import { defineTool, isTypedTool } from "../../src/tool/define-tool.ts"
import type { Tool, ToolDefinition } from "../../src/tool/tool.ts"
import { ExecutionFailed, InvalidArgument } from "../../src/tool/tool-error.ts"
import { toolFailure } from "../../src/tool/tool-failure.ts"
import { registerDefinitions } from "../../src/tool-server/registration.ts"
import { ToolServer } from "../../src/tool-server/tool-server.ts"
import { ToolTimeout } from "../../src/tool-server/tool-server-error.ts"

/**
 * The tool server (and the Worker) take a typed tool's handler value before it is rendered and render it in
 * their own reaction. Held here to the tool's own `execute` / `executeParsed`, reached through a wrapper the
 * server cannot recognise as typed: same text, or the same error, for every generated handler result and
 * argument text, with and without a signal.
 */

type Produced =
  | { readonly kind: "value"; readonly value: unknown; readonly async: boolean }
  | { readonly kind: "failure"; readonly async: boolean }
  | { readonly kind: "unserialisable"; readonly async: boolean }
  | { readonly kind: "throw"; readonly error: number }
  | { readonly kind: "reject"; readonly error: number }
  | { readonly kind: "effect"; readonly ok: boolean }
  | { readonly kind: "thenable" }

const errors = (i: number): unknown =>
  [new Error("broke"), "a string", 7, new InvalidArgument({ message: "bad city" }), new ToolTimeout({ toolName: "t", afterMs: 1, message: "late" }), undefined][i]

const produce = (p: Produced): unknown => {
  switch (p.kind) {
    case "value":
      return p.async ? Promise.resolve(p.value) : p.value
    case "failure":
      return p.async ? Promise.resolve(toolFailure("no forecast")) : toolFailure("no forecast")
    case "unserialisable":
      return p.async ? Promise.resolve({ n: 1n }) : { n: 1n }
    case "throw":
      throw errors(p.error)
    case "reject":
      return Promise.reject(errors(p.error))
    case "effect":
      return p.ok ? Effect.succeed({ fine: true }) : Effect.fail(new ExecutionFailed({ message: "effect failed" }))
    case "thenable":
      return { then: (resolve: (v: unknown) => void) => resolve("from a thenable") }
  }
}

const produced: fc.Arbitrary<Produced> = fc.oneof(
  fc.record({ kind: fc.constant("value" as const), value: fc.oneof(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined)), async: fc.boolean() }),
  fc.record({ kind: fc.constantFrom("failure" as const, "unserialisable" as const), async: fc.boolean() }),
  fc.record({ kind: fc.constantFrom("throw" as const, "reject" as const), error: fc.integer({ min: 0, max: 5 }) }),
  fc.record({ kind: fc.constant("effect" as const), ok: fc.boolean() }),
  fc.constant({ kind: "thenable" as const })
)

const argumentText = fc.oneof(
  fc.constantFrom('{"city":"Lisbon"}', '{"city":"Lisbon","days":3}', '{"city":1}', "[]", "nope", '{"city":"x","extra":1}'),
  fc.json({ maxDepth: 2 })
)

const settled = (promise: Promise<string>): Promise<unknown> =>
  promise.then(
    (text) => ({ text }),
    (error: { _tag?: unknown; message?: unknown; error?: { _tag?: unknown } }) => ({ tag: error._tag, inner: error.error?._tag, message: error.message })
  )

describe("typed tools rendered by their caller", () => {
  it("answer as their own execute does, with and without a signal (fast-check)", async () => {
    let current: Produced = { kind: "value", value: 1, async: false }
    const typed = defineTool({
      name: "weather",
      description: "d",
      parameters: jsonSchema<{ city: string; days?: number }>({
        type: "object",
        properties: { city: { type: "string" }, days: { type: "integer" } },
        required: ["city"],
        additionalProperties: false
      }),
      maxOutputBytes: 256,
      execute: () => produce(current)
    })
    // The same instance behind a plain object: the server cannot tell it is typed, so it takes the rendered text.
    const wrapped: ToolDefinition = () => {
      const [meta, tool] = typed()
      const plain: Tool = { execute: (text, context) => tool.execute(text, context), executeParsed: (value, context) => (tool.executeParsed as NonNullable<Tool["executeParsed"]>)(value, context) }
      return [meta, plain]
    }
    const direct = new ToolServer().handle()
    registerDefinitions(direct, [typed])
    const reference = new ToolServer().handle()
    registerDefinitions(reference, [wrapped])
    expect(isTypedTool((direct.getTool("weather") as { tool: Tool }).tool)).toBe(true)
    expect(isTypedTool((reference.getTool("weather") as { tool: Tool }).tool)).toBe(false)
    const signal = new AbortController().signal
    await fc.assert(
      fc.asyncProperty(produced, argumentText, fc.boolean(), async (p, text, withSignal) => {
        current = p
        const options = withSignal ? { signal } : undefined
        const got = await settled(direct.callTool("weather", text, options))
        const want = await settled(reference.callTool("weather", text, options))
        expect(got).toEqual(want)
      }),
      { numRuns: 300 }
    )
  })

  it("with a signal, end once: cancelled with the abort reason when it aborts first, else the tool's own answer (fast-check)", async () => {
    const unhandled: Array<unknown> = []
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason)
    process.on("unhandledRejection", onUnhandled)
    try {
      await fc.assert(
        fc.asyncProperty(fc.boolean(), fc.boolean(), fc.constantFrom("before", "during", "after", "never"), async (typedTool, fails, abortAt) => {
          let settle: (() => void) | undefined
          const definition = defineTool({
            name: "slow",
            description: "d",
            execute: (_args, context) =>
              new Promise<string>((resolve, reject) => {
                settle = () => (fails ? reject(new Error("late failure")) : resolve("late value"))
                if (abortAt === "during") controller.abort(REASON)
                void context
              })
          })
          const plain: ToolDefinition = () => {
            const [meta, tool] = definition()
            return [meta, { execute: (text, context) => tool.execute(text, context) }]
          }
          const handle = new ToolServer().handle()
          registerDefinitions(handle, [typedTool ? definition : plain])
          const controller = new AbortController()
          if (abortAt === "before") controller.abort(REASON)
          const settledOnce: Array<unknown> = []
          const call = handle.callTool("slow", "{}", { signal: controller.signal }).then(
            (text) => void settledOnce.push({ text }),
            (error: { _tag?: string; cause?: unknown }) => void settledOnce.push({ tag: error._tag, cause: error.cause })
          )
          await new Promise((resolve) => setImmediate(resolve))
          if (abortAt === "after") controller.abort(REASON)
          if (abortAt === "never") settle?.()
          await call
          // The tool settles late: nothing changes, nothing rejects unhandled.
          settle?.()
          await new Promise((resolve) => setImmediate(resolve))
          const want =
            abortAt === "never"
              ? fails
                ? { tag: "ToolExecution", cause: undefined }
                : { text: "late value" }
              : { tag: "ToolCancelled", cause: REASON }
          expect(settledOnce).toEqual([want])
        }),
        { numRuns: 60 }
      )
    } finally {
      process.off("unhandledRejection", onUnhandled)
    }
    expect(unhandled).toEqual([])
  })
})

const REASON = { why: "stop" }
