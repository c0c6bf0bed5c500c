import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { inspect } from "node:util"
import { Effect, Exit } from "effect"
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest"
import { z } from "zod"
import {
  type Cancelled,
  type DuplicateName,
  type LlmHttpError,
  Item,
  type LlmClient,
  PreLlmRequest,
  StreamHook,
  Timeline,
  ToolError,
  ToolMeta,
  ToolServer,
  Worker,
  canonicalJson,
  createLlmClient,
  defineTool,
  normalizeJsonSchema,
  toolsFragment
} from "../../src/index.ts"
import { registerDefinitions } from "../../src/tool-server/registration.ts"
import { ScriptedClient, textResponse, toolCallResponse } from "../worker/support/scripted-client.ts"

/** What every public error must be: a real Error that prints, logs and switches like one. */
const expectReadable = (error: unknown, tag: string): void => {
  expect(error).toBeInstanceOf(Error)
  const e = error as Error & { readonly _tag: string; readonly cause?: unknown }
  expect(e._tag).toBe(tag)
  expect(e.name).toBe(tag)
  expect(typeof e.message).toBe("string")
  expect(e.message.length).toBeGreaterThan(0)
  expect(e.stack).toMatch(new RegExp(`^${tag}: `))
  expect("cause" in e || e.cause === undefined).toBe(true)
  const line = String(e)
  expect(line.startsWith(`${tag}: `)).toBe(true)
  expect(line).not.toMatch(/[\r\n]/)
  const printed = inspect(e)
  expect(printed.startsWith(`${tag}: `)).toBe(true)
  expect(printed).toMatch(/\n {4}at /)
  if (tag !== "InvalidItem") expect(printed).toContain(`_tag: '${tag}'`) // a TypeError, tagged on its prototype
  // Still an error in Effect's channel: `yield*` fails the block with this very value.
  if (tag !== "InvalidItem") {
    const yieldable = e as unknown as Effect.Effect<never, unknown>
    const exit = Effect.runSyncExit(Effect.gen(function* () {
      yield* yieldable
    }))
    expect(Exit.isFailure(exit) && JSON.stringify(exit.cause).includes(tag)).toBe(true)
  }
}

const caught = async (run: () => unknown): Promise<unknown> => {
  try {
    await run()
  } catch (thrown) {
    return thrown
  }
  throw new Error("expected a failure")
}

let server: Server
let base = ""
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.startsWith("/http")) return void res.writeHead(400, { "content-type": "application/json" }).end('{"error":"bad"}')
    if (req.url?.startsWith("/json")) return void res.writeHead(200, { "content-type": "application/json" }).end("{}")
    if (req.url?.startsWith("/hang")) return // never answers: the headers deadline passes
    res.writeHead(200, { "content-type": "text/event-stream" })
    if (req.url?.startsWith("/provider")) {
      res.end('event: error\ndata: {"type":"error","error":{"type":"invalid_request_error","message":"bad request"}}\n\n')
      return
    }
    // a long text delta, for the size bound
    res.end(
      'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"m","usage":{"input_tokens":1,"output_tokens":0}}}\n\n' +
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
        `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${"x".repeat(5000)}"}}\n\n`
    )
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const request = { model: "m", items: [Item.userText("hi")], tools: [], config: {} }
const drain = async (client: LlmClient, signal?: AbortSignal): Promise<void> => {
  for await (const _ of client.stream(request, signal === undefined ? {} : { signal })) void _
}
const anthropicAt = (path: string, extra: Partial<Parameters<typeof createLlmClient>[0]> = {}): LlmClient =>
  createLlmClient({ provider: "anthropic", model: "m", apiKey: "k", baseUrl: `${base}${path}`, retry: { maxRetries: 0 }, ...extra })

const weather = defineTool({ name: "weather", description: "d", parameters: z.object({ city: z.string() }), execute: () => "sunny" })

describe("every public error is a readable Error", () => {
  it("schema: RecursiveSchemaError, UnsupportedSchemaError, JsonTooDeepError, ToolNameRejected", async () => {
    expectReadable(await caught(() => normalizeJsonSchema({ $ref: "#/$defs/a", $defs: { a: { type: "object", properties: { x: { $ref: "#/$defs/a" } } } } })), "RecursiveSchemaError")
    expectReadable(await caught(() => normalizeJsonSchema({ type: "string" })), "UnsupportedSchemaError")
    let deep: unknown = 1
    for (let i = 0; i < 300; i++) deep = [deep]
    expectReadable(await caught(() => canonicalJson(deep as never)), "JsonTooDeepError")
    expectReadable(await caught(() => toolsFragment([{ name: "2fa.check", description: "d", inputSchema: { type: "object", properties: {} } }], "gemini")), "ToolNameRejected")
  })

  it("tool: InvalidToolName and the three ToolError variants", async () => {
    expectReadable(await caught(() => ToolMeta.make("no spaces")), "InvalidToolName")
    expectReadable(ToolError.InvalidArgument("bad"), "InvalidArgument")
    expectReadable(ToolError.ExecutionFailed("failed"), "ExecutionFailed")
    expectReadable(ToolError.Internal("defect"), "Internal")
  })

  it("tool server: DuplicateName, RegistrationFailed, ToolNotFound, ToolExecution, ToolTimeout, ToolCancelled", async () => {
    const worker = Worker.create({ client: new ScriptedClient([]) })
    worker.registerTool(weather)
    expectReadable(await caught(() => worker.registerTool(weather)), "DuplicateName")
    expectReadable(await caught(() => worker.registerTool((() => { throw new Error("factory") }) as never)), "RegistrationFailed")
    const handle = new ToolServer().handle()
    registerDefinitions(handle, [
      weather,
      defineTool({ name: "slow", description: "d", execute: (_a, { signal }) => new Promise((resolve) => signal.addEventListener("abort", resolve)) })
    ])
    expectReadable(await caught(() => handle.callTool("missing", "{}")), "ToolNotFound")
    const execution = await caught(() => handle.callTool("weather", '{"city":1}'))
    expectReadable(execution, "ToolExecution")
    expect((execution as { toolName: string }).toolName).toBe("weather")
    expectReadable(await caught(() => handle.callTool("slow", "{}", { timeoutMs: 5 })), "ToolTimeout")
    const why = new Error("stop now")
    const toolCancelled = await caught(() => handle.callTool("slow", "{}", { signal: AbortSignal.abort(why) }))
    expectReadable(toolCancelled, "ToolCancelled")
    expect((toolCancelled as Error).cause).toBe(why)
  })

  it("llm: every LlmError variant from a real loopback server", async () => {
    expectReadable(await caught(() => createLlmClient({ provider: "nope", model: "m" })), "LlmConfigError")
    expectReadable(await caught(() => drain(anthropicAt("/http"))), "LlmHttpError")
    expectReadable(await caught(() => drain(anthropicAt("/json"))), "LlmProtocolError")
    expectReadable(await caught(() => drain(anthropicAt("/provider"))), "LlmProviderError")
    expectReadable(await caught(() => drain(anthropicAt("/hang", { timeouts: { headersMs: 30 } }))), "LlmTimeout")
    expectReadable(await caught(() => drain(anthropicAt("/text", { limits: { maxTextBytes: 100 } }))), "LlmLimitExceeded")
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const refused = await caught(() => drain(createLlmClient({ provider: "ollama", model: "m", baseUrl: `http://127.0.0.1:${port}/v1`, retry: { maxRetries: 0 } })))
    expectReadable(refused, "LlmNetworkError")
    expect((refused as Error).cause).toBeInstanceOf(Error)
    const why = new Error("user closed the tab")
    const cancelled = await caught(() => drain(anthropicAt("/hang"), AbortSignal.abort(why)))
    expectReadable(cancelled, "LlmCancelled")
    expect(cancelled).toMatchObject({ reason: why, cause: why })
  })

  it("timeline: TimelineMisuse", async () => {
    const timeline = new Timeline()
    timeline.finish()
    expectReadable(await caught(() => timeline.finish()), "TimelineMisuse")
  })

  it("worker: the run's errors, the state errors and InvalidItem", async () => {
    const mutable = Worker.create({ client: new ScriptedClient([textResponse("ok")]) })
    const locked = mutable.lock()
    expectReadable(await caught(() => mutable.run("x")), "StaleWorker")
    expectReadable(await caught(() => (locked as unknown as { setSystemPrompt(p: string): void }).setSystemPrompt("x")), "WorkerLocked")

    const slow = Worker.create({ client: new ScriptedClient([{ ...textResponse("ok"), delayMs: 20 }]) })
    const first = slow.run("a")
    expectReadable(await caught(() => slow.run("b")), "WorkerBusy")
    await first

    const why = new Error("user closed the tab")
    const stalled = Worker.create({ client: new ScriptedClient([{ events: [], stallAfter: 0 }]) })
    const cancelled = await caught(() => stalled.run("x", { signal: AbortSignal.abort(why) }))
    expectReadable(cancelled, "Cancelled")
    expect(cancelled).toMatchObject({ reason: why, cause: why })

    const aborting = Worker.create({ client: new ScriptedClient([textResponse("ok")]) })
    aborting.addHook("OnStreamChunk", () => StreamHook.abort("enough"))
    expectReadable(await caught(() => aborting.run("x")), "HookAborted")

    const failing = Worker.create({ client: new ScriptedClient([textResponse("ok")]) })
    failing.addHook("OnPromptSubmit", () => {
      throw new Error("hook bug")
    })
    const hookFailed = await caught(() => failing.run("x"))
    expectReadable(hookFailed, "HookFailed")
    expect(inspect(hookFailed)).toContain("[cause]: Error: hook bug")

    const client = anthropicAt("/http")
    expectReadable(await caught(() => Worker.create({ client }).run("x")), "ClientFailed")

    const looping = Worker.create({ client: new ScriptedClient([toolCallResponse([{ id: "c", name: "weather", args: '{"city":"P"}' }])]), maxTurns: 1 })
    looping.registerTool(weather)
    expectReadable(await caught(() => looping.run("x")), "MaxTurnsExceeded")

    const violating = Worker.create({ client: new ScriptedClient([textResponse("ok")]), history: [Item.userText("locked")] }).lock()
    violating.addHook("PreLlmRequest", ({ context }) => PreLlmRequest.rewrite({ ...context, items: [Item.userText("changed"), ...context.items.slice(1)] }))
    expectReadable(await caught(() => violating.run("x")), "CacheLockViolation")

    const broken = Worker.create({ client: { ...new ScriptedClient([]), scheme: "anthropic", provider: "p", model: "m", encodeRequest: () => { throw new Error("no") }, validate: () => [], stream: () => { throw new Error("no") } } as LlmClient })
    expectReadable(await caught(() => broken.run("x")), "WorkerDefect")

    const paused = Worker.create({ client: new ScriptedClient([toolCallResponse([{ id: "c", name: "weather", args: '{"city":"P"}' }])]) })
    paused.registerTool(weather)
    paused.addHook("PreToolCall", () => ({ _tag: "Pause", reason: "later" }))
    await paused.run("x")
    expectReadable(await caught(() => paused.lock()), "CallsPending")

    const chatty = Worker.create({ client: new ScriptedClient([textResponse("x".repeat(200))]) })
    const iterator = chatty.events({ maxBufferedEvents: 2 })[Symbol.asyncIterator]()
    const started = iterator.next()
    await chatty.run("go")
    await started
    const overflow = await caught(async () => {
      for (;;) if ((await iterator.next()).done === true) return
    })
    expectReadable(overflow, "EventBufferOverflow")

    const item = await caught(() => Worker.create({ client: new ScriptedClient([]) }).pushItem({ type: "nonsense" } as never))
    expectReadable(item, "InvalidItem")
    expect(item).toBeInstanceOf(TypeError)
  })

  it("toString stays one line when the message has several", () => {
    const e = ToolError.ExecutionFailed("first line\nsecond line")
    expect(String(e)).toBe("ExecutionFailed: first line second line")
    expect(e.message).toBe("first line\nsecond line")
  })
})

describe("the declared types show the error's own fields, not Effect's internals", () => {
  it("beyond Error's own keys, an error declares its tag, its fields and the iterator `yield*` needs", () => {
    // (Effect augments the global Error interface itself; that is Effect's, and every Error shows it.)
    type Own<E> = Exclude<keyof E, keyof Error>
    expectTypeOf<Own<Cancelled>>().toEqualTypeOf<"_tag" | "partial" | "reason" | typeof Symbol.iterator>()
    expectTypeOf<Own<DuplicateName>>().toEqualTypeOf<"_tag" | "toolName" | typeof Symbol.iterator>()
    expectTypeOf<Own<LlmHttpError>>().toEqualTypeOf<"_tag" | "status" | "body" | typeof Symbol.iterator>()
    expectTypeOf<DuplicateName["name"]>().toEqualTypeOf<"DuplicateName">()
  })
})
