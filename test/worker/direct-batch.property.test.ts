import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type FunctionCallItem, Item } from "../../src/llm/item.ts"
import type { LlmClient } from "../../src/llm/client.ts"
import { jsonSchema } from "../../src/schema/codec.ts"
import { restoreStrictArguments } from "../../src/schema/provider-tools.ts"
import { jsonTextDepth } from "../../src/schema/json-depth.ts"
import type { RunTrace, ToolTrace } from "../../src/telemetry/worker-tracing.ts"
import { defineTool } from "../../src/tool/define-tool.ts"
import type { Tool, ToolContext, ToolDefinition } from "../../src/tool/tool.ts"
import { toolFailure } from "../../src/tool/tool-failure.ts"
import { ToolMeta } from "../../src/tool/tool-meta.ts"
import { registerDefinitions } from "../../src/tool-server/registration.ts"
import { ToolServer } from "../../src/tool-server/tool-server.ts"
import { ToolTimeout } from "../../src/tool-server/tool-server-error.ts"
import { prepareArguments } from "../../src/worker/prepared-arguments.ts"
import { type BatchEnd, executeBatch, executeWithHooks, settleBatch } from "../../src/worker/tool-execution.ts"
import type { ToolOutcome } from "../../src/worker/tool-outcome.ts"
import { type WorkerCore, makeCore } from "../../src/worker/worker-core.ts"
import { collectUnhandledRejections } from "../support/unhandled-rejections.ts"

/**
 * `executeBatch` runs a batch no hook can see on its direct path (and a batch of one call without the batch
 * machinery). Held here to the general path, `executeWithHooks`, on the same batch: same outcomes in the same
 * order, same error, same spans (each started call's span ended exactly once), same tool invocations — over
 * generated arguments, tool behaviours (values, rejections, synchronous throws, tools that never settle, tools
 * that abort the run's signal while starting) and cancellation at generated points. Each step is separated by a
 * macrotask, so both paths have drained their microtasks when the test settles a tool or aborts the signal.
 */

type Behaviour =
  | { readonly kind: "value"; readonly value: unknown }
  | { readonly kind: "sync"; readonly value: string }
  | { readonly kind: "reject"; readonly error: "error" | "string" | "timeout" | "number" }
  | { readonly kind: "throw" }
  | { readonly kind: "failure" }
  | { readonly kind: "never" }
  | { readonly kind: "abort" }

interface CallSpec {
  readonly name: "typed" | "text" | "capped" | "missing"
  readonly args: string
  readonly behaviour: Behaviour
}

interface Scenario {
  readonly scheme: "anthropic" | "openai-chat"
  readonly lanes: number
  readonly calls: ReadonlyArray<CallSpec>
  /** "before": the signal is aborted before the batch; a number: on that step; undefined: only if nothing is left to settle. */
  readonly abortAt: "before" | number | undefined
  /** A deadline for the text tool (long: it never fires, but the call takes the tool server's guarded path). */
  readonly deadline: boolean
  /** Spans recorded (a tracer's `within` per call), or the no-op trace a worker without telemetry has. */
  readonly traced: boolean
  /** The Worker's depth bound above the codec's (64): the codec's own bound must still refuse deeper arguments. */
  readonly deepLimit: boolean
}

/** A finished batch's outcomes, one per call in model order, whichever form it ended in (a sole call's or a batch's). */
const batchOutcomes = (end: Exclude<BatchEnd, { readonly kind: "paused" }>): ReadonlyArray<ToolOutcome> =>
  end.kind === "sole" ? [end.outcome] : end.outcomes

const REASON = { why: "the user pressed stop" }

/** Set while a test's `abort()` runs: a batch's `settle` must never run inside it (decision 0089). */
let aborting = false
let settledInsideAbort = 0
const abortNow = (controller: AbortController): void => {
  aborting = true
  try {
    controller.abort(REASON)
  } finally {
    aborting = false
  }
}

/**
 * `settleBatch` as the turn loop calls it, its `settle` handing the end on (not `executeBatch`'s own, which skips
 * the settling): a sole call is settled from within its tool's reaction.
 */
const settled: typeof executeBatch = (core, calls, decided, signal, offered) =>
  settleBatch(core, calls, decided, signal, offered, (end, seen) => {
    if (aborting) settledInsideAbort++
    if (seen !== calls) throw new Error("settled with another batch's calls")
    return end
  })

const rejection = (error: "error" | "string" | "timeout" | "number"): unknown =>
  error === "error"
    ? new Error("tool broke")
    : error === "string"
      ? "a string"
      : error === "timeout"
        ? new ToolTimeout({ toolName: "x", afterMs: 5, message: "inner deadline" })
        : 42

/** One run of a scenario through `run`: what it ended with, the spans, the tools' invocations. */
const drive = async (
  run: typeof executeBatch,
  scenario: Scenario,
  /** The typed tools behind plain objects: the call path cannot tell them typed and takes their rendered text. */
  plain = false
): Promise<{ readonly end: unknown; readonly spans: ReadonlyArray<string>; readonly invoked: ReadonlyArray<string> }> => {
  const controller = new AbortController()
  const pending: Array<() => void> = []
  const invoked: Array<string> = []
  const spans: Array<string> = []
  const behaviours = new Map(scenario.calls.map((spec, i) => [`call_${i}`, spec.behaviour]))

  const perform = (context: ToolContext, seen: string): Promise<unknown> | unknown => {
    invoked.push(`${context.callId}:${seen}`)
    const behaviour = behaviours.get(context.callId) as Behaviour
    switch (behaviour.kind) {
      case "sync":
        return behaviour.value
      case "throw":
        throw new Error("thrown while starting")
      case "failure":
        return toolFailure("no such thing")
      case "never":
        return new Promise(() => undefined)
      case "abort":
        abortNow(controller)
        return new Promise((resolve) => pending.push(() => resolve("after the abort")))
      case "value":
        return new Promise((resolve) => pending.push(() => resolve(behaviour.value)))
      case "reject":
        return new Promise((_, reject) => pending.push(() => reject(rejection(behaviour.error))))
    }
  }
  const schema = jsonSchema<{ a?: number; s?: string }>({
    type: "object",
    properties: { a: { type: "integer" }, s: { type: "string" } },
    additionalProperties: false
  })
  const typed = defineTool({ name: "typed", description: "typed", parameters: schema, execute: (args, context) => perform(context, JSON.stringify(args)) })
  const capped = defineTool({
    name: "capped",
    description: "capped",
    parameters: schema,
    maxOutputBytes: 256,
    execute: async (args, context) => `${"é".repeat(300)}${String(await perform(context, JSON.stringify(args)))}`
  })
  const text = (): readonly [ToolMeta, Tool] => [
    ToolMeta.make("text").description("text").inputSchema({ type: "object" }),
    { execute: (argumentsJson: string, context: ToolContext) => perform(context, argumentsJson) as Promise<string> }
  ]
  const tools = new ToolServer().handle()
  const asPlain = (definition: ToolDefinition): ToolDefinition => () => {
    const [meta, tool] = definition()
    const parsed = tool.executeParsed as NonNullable<Tool["executeParsed"]>
    return [meta, { execute: (json, context) => tool.execute(json, context), executeParsed: (value, context) => parsed.call(tool, value, context) }]
  }
  registerDefinitions(tools, plain ? [asPlain(typed), asPlain(capped), text] : [typed, capped, text])
  const core: WorkerCore = makeCore({
    client: { scheme: scenario.scheme } as unknown as LlmClient,
    tools,
    systemPrompt: undefined,
    config: {},
    history: [],
    settings: {
      maxTurns: 4,
      toolTimeoutMs: undefined,
      toolTimeouts: scenario.deadline ? { text: 60_000 } : {},
      maxToolOutputBytes: 1024,
      maxArgumentDepth: scenario.deepLimit ? 128 : 64,
      maxParallelTools: scenario.lanes,
      maxCallsPerResponse: 16
    }
  })
  const trace: RunTrace = {
    request: () => ({ succeeded: () => undefined, failed: () => undefined }),
    tool: (call): ToolTrace => {
      spans.push(`start ${call.callId} ${call.arguments}`)
      return { within: (fn) => fn(), ended: (outcome) => void spans.push(`end ${call.callId} ${outcome.status}`) }
    },
    finished: () => undefined,
    failed: () => undefined
  }
  if (scenario.traced) core.trace = trace

  const calls: Array<FunctionCallItem> = scenario.calls.map((spec, i) => Item.functionCall(`call_${i}`, spec.name, spec.args))
  const offered = new Set(["typed", "text", "capped"])
  if (scenario.abortAt === "before") abortNow(controller)
  let end: BatchEnd | undefined
  const batch = run(core, calls, new Map(), controller.signal, offered).then((ended) => {
    end = ended
  })
  for (let step = 0; end === undefined; step++) {
    await new Promise((resolve) => setImmediate(resolve))
    if (end !== undefined) break
    if (step > 50) throw new Error("the batch did not end")
    const settle = pending.shift()
    if (step === scenario.abortAt || settle === undefined) abortNow(controller)
    else settle()
  }
  await batch
  // Tools left pending settle now: late results must change nothing (and reject nowhere unhandled).
  for (const settle of pending.splice(0)) settle()
  await new Promise((resolve) => setImmediate(resolve))
  const ended = end as BatchEnd
  const shown =
    ended.kind !== "paused"
      ? {
          outcomes: batchOutcomes(ended),
          error: ended.error === undefined ? undefined : { tag: ended.error._tag, message: ended.error.message, cause: ended.error.cause }
        }
      : ended
  return { end: shown, spans, invoked }
}

const unordered = <T extends { readonly spans: ReadonlyArray<string> }>(driven: T): T => ({ ...driven, spans: [...driven.spans].sort() })

const argumentText: fc.Arbitrary<string> = fc.oneof(
  fc
    .record(
      { a: fc.option(fc.integer(), { nil: null }), s: fc.option(fc.string({ maxLength: 8 }), { nil: null }), x: fc.integer() },
      { requiredKeys: [] }
    )
    .map((value) => JSON.stringify(value)),
  fc.constantFrom("{}", '{"a":null}', '{"a":1,"s":"null"}', '{"s":"[{["}', "[1]", "nope", '"text"', "null", '{"a":1.5}'),
  fc.constant(`{"a":${"[".repeat(70)}${"]".repeat(70)}}`),
  fc.json({ maxDepth: 3 })
)

const behaviour: fc.Arbitrary<Behaviour> = fc.oneof(
  fc.record({ kind: fc.constant("value" as const), value: fc.oneof(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined)) }),
  fc.record({ kind: fc.constant("sync" as const), value: fc.string({ maxLength: 12 }) }),
  fc.record({ kind: fc.constant("reject" as const), error: fc.constantFrom("error" as const, "string" as const, "timeout" as const, "number" as const) }),
  fc.constantFrom<Behaviour>({ kind: "throw" }, { kind: "failure" }, { kind: "never" }, { kind: "abort" })
)

const scenario: fc.Arbitrary<Scenario> = fc.record({
  scheme: fc.constantFrom("anthropic" as const, "openai-chat" as const),
  lanes: fc.integer({ min: 1, max: 3 }),
  calls: fc.array(
    fc.record({ name: fc.constantFrom("typed" as const, "text" as const, "capped" as const, "missing" as const), args: argumentText, behaviour }),
    { minLength: 1, maxLength: 4 }
  ),
  abortAt: fc.oneof(fc.constant("before" as const), fc.integer({ min: 0, max: 5 }), fc.constant(undefined)),
  deadline: fc.boolean(),
  traced: fc.boolean(),
  deepLimit: fc.boolean()
})

describe("the direct batch path", () => {
  const unhandled = collectUnhandledRejections()

  it("gives what the general path gives, and what the tools' own rendering gives: outcomes, error, spans, invocations (fast-check)", async () => {
    {
      await fc.assert(
        fc.asyncProperty(scenario, async (s) => {
          const direct = await drive(executeBatch, s)
          const general = await drive(executeWithHooks, s)
          // Parallel calls may end in another order on each path (microtask timing is not part of the contract):
          // spans compare as a multiset, and each call's own span starts before it ends.
          expect(unordered(direct)).toEqual(unordered(general))
          // The turn loop's form, the end settled from within the batch, gives the same, never inside an abort.
          expect(unordered(await drive(settled, s))).toEqual(unordered(direct))
          expect(settledInsideAbort).toBe(0)
          // And both render typed tools' values as the tools' own `executeParsed` does.
          expect(unordered(direct)).toEqual(unordered(await drive(executeWithHooks, s, true)))
          for (const [i] of s.calls.entries()) {
            const start = direct.spans.findIndex((span) => span.startsWith(`start call_${i} `))
            const end = direct.spans.findIndex((span) => span.startsWith(`end call_${i} `))
            if (start !== -1) expect(end).toBeGreaterThan(start)
          }
          // Every call has exactly one result; every span that started ended once.
          const outcomes = (direct.end as { outcomes: ReadonlyArray<{ callId: string }> }).outcomes
          expect(outcomes.map((o) => o.callId)).toEqual(s.calls.map((_, i) => `call_${i}`))
          const started = direct.spans.filter((span) => span.startsWith("start")).length
          expect(direct.spans.filter((span) => span.startsWith("end")).length).toBe(started)
        }),
        { numRuns: 150 }
      )
      expect(unhandled).toEqual([])
    }
  })

  it("keeps the abort reason on the run's error and cancels the call that was running", async () => {
    const { end } = await drive(executeBatch, {
      scheme: "anthropic",
      lanes: 1,
      calls: [{ name: "typed", args: '{"a":1}', behaviour: { kind: "never" } }],
      abortAt: 0,
      deadline: false,
      traced: true,
      deepLimit: false
    })
    expect(end).toMatchObject({
      outcomes: [{ callId: "call_0", status: "cancelled", output: "Tool call cancelled: the run was cancelled", isError: true }],
      error: { tag: "Cancelled", cause: REASON }
    })
  })
})

describe("prepareArguments shortcuts", () => {
  const strictSchema = {
    type: "object",
    properties: { a: { type: "integer" }, o: { type: "object", properties: { b: { type: "string" } }, additionalProperties: false } },
    additionalProperties: false
  } as const
  const core = (scheme: string) => ({ client: { scheme }, settings: { maxArgumentDepth: 8 } }) as unknown as WorkerCore

  it("skips the strict restore only when it would change nothing (fast-check)", () => {
    const member = fc.oneof(fc.constant(null), fc.integer(), fc.string({ maxLength: 6 }))
    const value = fc.record({ a: member, o: fc.oneof(fc.constant(null), fc.record({ b: member }, { requiredKeys: [] })) }, { requiredKeys: [] })
    fc.assert(
      fc.property(value, (v) => {
        const text = JSON.stringify(v)
        const prepared = prepareArguments(core("openai-chat"), strictSchema, text)
        const parsed: unknown = JSON.parse(text)
        const restored = restoreStrictArguments(strictSchema, parsed)
        expect(prepared.ok).toBe(true)
        if (!prepared.ok) return
        expect(prepared.args.value).toEqual(restored)
        // The text is handed on only while it still spells the value.
        expect(prepared.args.text === text).toBe(restored === parsed || !text.includes("null"))
      })
    )
  })

  it("refuses exactly the texts nested deeper than the bound (fast-check)", () => {
    const piece = fc.constantFrom("[", "]", "{", "}", '"', "\\", "a", ",", ":", "1", " ")
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 80 }), fc.integer({ min: 0, max: 12 }), (pieces, nesting) => {
        const text = `${"[".repeat(nesting)}${pieces.join("")}${"]".repeat(nesting)}`
        const prepared = prepareArguments(core("anthropic"), {}, text)
        const tooDeep = jsonTextDepth(text, 8) > 8
        expect(!prepared.ok && prepared.problem === "arguments nested deeper than 8 levels").toBe(tooDeep)
      })
    )
  })
})
