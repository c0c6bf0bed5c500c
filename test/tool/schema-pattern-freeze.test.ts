import { UnsupportedSchemaError } from "../../src/schema/normalize.ts"
import { afterEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { createLlmClient, defineTool, jsonSchema, makeArgumentCodec, Worker } from "../../src/index.ts"
import { type ReplayProvider, startReplayProvider } from "../../src/testing/index.ts"
import { chatText, chatToolCall } from "../remote/support/host.ts"

/**
 * 29 × `a` and `!`: a backtracking RegExp takes about 2^29 steps on it (20 s and more here); the linear-time engine
 * microseconds. The bound below is generous for a busy machine and far below the unfixed code.
 */
const HOSTILE = `${"a".repeat(29)}!`
const QUICK_MS = 2000

const replays: Array<ReplayProvider> = []
afterEach(async () => {
  await Promise.all(replays.splice(0).map((r) => r.close()))
})

describe("a developer's schema pattern against a model's hostile value (in process)", () => {
  it("defineTool with `^(a+)+$`: the run ends quickly and the model reads the ordinary argument error", async () => {
    const provider = await startReplayProvider({
      scheme: "openai-chat",
      script: [
        { kind: "stream", transcript: chatToolCall("match_a", JSON.stringify({ s: HOSTILE })) },
        { kind: "stream", transcript: chatText("Refused.") }
      ]
    })
    replays.push(provider)
    const client = createLlmClient({ provider: "openai", model: "gpt-4.1-mini", apiKey: "test-key", baseUrl: provider.baseUrl, retry: { maxRetries: 0 } })
    const calls: Array<string> = []
    const matchA = defineTool({
      name: "match_a",
      description: "Takes a run of a",
      parameters: jsonSchema<{ s: string }>({ type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } }, required: ["s"] }),
      execute: ({ s }) => {
        calls.push(s)
        return "ok"
      }
    })
    const worker = Worker.create({ client })
    worker.registerTool(matchA)
    const started = performance.now()
    const result = await worker.run("go")
    expect(performance.now() - started).toBeLessThan(QUICK_MS)
    expect(result.status).toBe("finished")
    const output = result.items.find((item) => item.type === "function_call_output")
    expect(JSON.stringify(output)).toContain("expected a string matching ^(a+)+$")
    expect(calls).toEqual([])
    expect(provider.requests[1]?.body).toContain("expected a string matching ^(a+)+$")
  })

  it("the same pattern from zod's `.regex()`: the check refuses the value before zod's own RegExp sees it", () => {
    const codec = makeArgumentCodec(z.object({ s: z.string().regex(/^(a+)+$/) }))
    const started = performance.now()
    const refused = codec.decode({ s: HOSTILE })
    expect(performance.now() - started).toBeLessThan(QUICK_MS)
    expect(refused).toMatchObject({ ok: false, issues: [{ path: ["s"], message: "expected a string matching ^(a+)+$, got \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\"" }] })
    expect(codec.decode({ s: "aaaa" })).toEqual({ ok: true, value: { s: "aaaa" } })
  })

  it("a developer's lookahead (which the linear-time engine cannot run) still works: trusted code, run by RegExp", () => {
    const codec = makeArgumentCodec(jsonSchema({ type: "object", properties: { s: { type: "string", pattern: "^(?!-)[a-z-]+$" } } }))
    expect(codec.decode({ s: "ab-c" })).toEqual({ ok: true, value: { s: "ab-c" } })
    expect(codec.decode({ s: "-ab" })).toMatchObject({ ok: false, issues: [{ path: ["s"] }] })
    // The same schema from outside the process is refused, naming the pattern and where it is.
    expect(() => makeArgumentCodec(jsonSchema({ type: "object", properties: { s: { type: "string", pattern: "^(?!-)[a-z-]+$" } } }), { untrustedSchema: true })).toThrow(
      /pattern "\^\(\?!-\)\[a-z-\]\+\$" at \/properties\/s\/pattern cannot be used: lookahead/
    )
  })

  it("a pattern too large to parse is a typed refusal, never a stack overflow: 20,000 nested groups, from either side", () => {
    const nested = (n: number) => jsonSchema({ type: "object", properties: { s: { type: "string", pattern: `${"(".repeat(n)}a${")".repeat(n)}` } } })
    const deep = nested(20_000)
    expect(() => makeArgumentCodec(deep, { untrustedSchema: true })).toThrow(UnsupportedSchemaError)
    expect(() => makeArgumentCodec(deep, { untrustedSchema: true })).toThrow(/it is 40001 characters long; at most 16384 are read/)
    expect(() => makeArgumentCodec(nested(8_000), { untrustedSchema: true })).toThrow(/groups nest deeper than 100 levels/)
    expect(makeArgumentCodec(nested(100), { untrustedSchema: true }).decode({ s: "a" })).toMatchObject({ ok: true })
    // A developer's schema is compiled on first use; the refusal is the same typed error.
    const thrown = (() => {
      try {
        makeArgumentCodec(deep).decode({ s: "a" })
        return undefined
      } catch (error) {
        return error
      }
    })()
    expect(thrown).toBeInstanceOf(UnsupportedSchemaError)
  })
})
