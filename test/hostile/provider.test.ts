/**
 * The hostile provider, over real loopback HTTP, through `createLlmClient` + `Worker.create` + `run`.
 *
 * | test                                                        | ISSUE7 bullet                                              |
 * |-------------------------------------------------------------|------------------------------------------------------------|
 * | terminal event, connection left open → answer kept (×3)     | Lost calls: "[DONE] (or any terminal event) … left open"   |
 * | 200 with text/html → protocol error, not retried            | Smaller defects: "A 200 response with a non-event-stream…" |
 * | anthropic pings forever → first-content deadline fires      | Unbounded: "Keep-alive events before any content …"        |
 * | SSE-comment keep-alives forever → first-content deadline    | Unbounded: "Keep-alive events …" (control, comment form)   |
 * | reset after content / stall / garbage / 20 MiB event (×4)   | Tests and figures: termination; every rejection WorkerError |
 * | 10 MiB error body → bounded error text                      | Unbounded: error texts quote a bounded prefix              |
 */
import { describe, expect, it } from "vitest"
import { Worker, isWorkerError } from "../../src/index.ts"
import {
  clientFor,
  expectSettledAsWorker,
  settleRun,
  show,
  hostileServers,
  watchUnhandled
} from "./support/harness.ts"
import { type Reply, answer, keepAliveForever, plain, rawSse } from "./support/hostile-provider.ts"
import { type HostileScheme, PING, answerFrames } from "./support/wire.ts"

watchUnhandled()
const serve = hostileServers()

/** Every field of a failure, as text, so a test can check what the message names without knowing which field. */
const failureText = (error: unknown): string => {
  const e = error as { message?: unknown; error?: { message?: unknown; _tag?: unknown } }
  return `${String(e?.message)} | ${String(e?.error?._tag)} ${String(e?.error?.message)}`
}

describe("hostile provider: the terminal event completes the response", () => {
  // Gemini has no terminal event (a usage-only chunk may follow finishReason), so only the three with one.
  for (const scheme of ["openai-chat", "openai-responses", "anthropic"] as const) {
    it(`${scheme}: a complete answer whose connection is then left open is kept, not failed at the idle deadline`, async () => {
      const server = await serve(scheme, [answer(scheme, { text: ["All ", "done."] }, "hold")])
      // A short idle deadline: today's behaviour (waiting for the close) turns into a timeout failure quickly.
      const worker = Worker.create({ client: clientFor(scheme, server, { timeouts: { idleMs: 400 } }) })
      const settled = await settleRun(worker, worker.run("hi"))
      expect(settled.kind, show(settled)).toBe("resolved")
      if (settled.kind !== "resolved") return
      expect(settled.value.status).toBe("finished")
      const texts = worker.history().flatMap((item) => (item.type === "message" && item.role === "assistant" ? item.content : []))
      expect(texts.map((part) => ("text" in part ? part.text : "")).join("")).toBe("All done.")
    })
  }
})

describe("hostile provider: a 200 that is not an event stream", () => {
  for (const scheme of ["openai-chat", "anthropic"] as const) {
    it(`${scheme}: an HTML proxy page is a protocol error naming the content type and first bytes, not retried`, async () => {
      const page = "<!DOCTYPE html><html><head><title>Captive portal</title></head><body>Sign in to continue</body></html>"
      const server = await serve(scheme, [plain(200, "text/html; charset=utf-8", page)])
      const worker = Worker.create({ client: clientFor(scheme, server, { maxRetries: 3 }) })
      const settled = await settleRun(worker, worker.run("hi"))
      expectSettledAsWorker(settled)
      expect(settled.kind, show(settled)).toBe("rejected")
      if (settled.kind !== "rejected") return
      const text = failureText(settled.error)
      expect(text).toMatch(/text\/html/i)
      expect(text).toMatch(/<!DOCTYPE html|Captive portal/i)
      expect(text).not.toMatch(/ended (early|before)/i)
      expect(server.requests, "a protocol error is not retried").toHaveLength(1)
    })
  }
})

describe("hostile provider: keep-alives never satisfy the first-content deadline", () => {
  it("anthropic: `ping` events forever, no content → the first-content deadline fires and the run fails", async () => {
    const start = [...answerFrames("anthropic", { omitTerminal: true })].slice(0, 1)
    const server = await serve("anthropic", [keepAliveForever(start, PING, 5)])
    const worker = Worker.create({ client: clientFor("anthropic", server, { timeouts: { firstEventMs: 300, idleMs: 300 } }) })
    // 5 s is over 15 times the deadline under test.
    const settled = await settleRun(worker, worker.run("hi"), 5_000)
    expect(settled.kind, "pings re-armed the deadline: the run never ended").toBe("rejected")
    expectSettledAsWorker(settled)
    if (settled.kind === "rejected") expect(failureText(settled.error)).toMatch(/timeout|within \d+ ms|deadline/i)
  })

  it("openai-chat: SSE-comment keep-alives forever, no content → the run fails at a deadline", async () => {
    const start = [...answerFrames("openai-chat", { omitTerminal: true })].slice(0, 1)
    const server = await serve("openai-chat", [keepAliveForever(start, ": keep-alive\n\n", 5)])
    const worker = Worker.create({ client: clientFor("openai-chat", server, { timeouts: { firstEventMs: 300, idleMs: 300 } }) })
    const settled = await settleRun(worker, worker.run("hi"))
    expect(settled.kind, show(settled)).toBe("rejected")
    expectSettledAsWorker(settled)
  })
})

describe("hostile provider: misbehaving connections end every run with a WorkerError", () => {
  const cases: ReadonlyArray<{ readonly name: string; readonly scheme: HostileScheme; readonly reply: Reply }> = [
    {
      name: "connection reset after some content",
      scheme: "anthropic",
      reply: answer("anthropic", { text: ["partial ", "answer"], omitTerminal: true }, "reset")
    },
    {
      name: "content then silence (stall) until the idle deadline",
      scheme: "openai-responses",
      reply: answer("openai-responses", { text: ["thinking about it"], omitTerminal: true }, "hold")
    },
    {
      name: "a data line that is not JSON",
      scheme: "gemini",
      reply: rawSse(["data: <html>oops</html>\n\n"])
    },
    {
      name: "one SSE event of 20 MiB",
      scheme: "openai-chat",
      reply: rawSse([`data: {"choices":[{"index":0,"delta":{"content":"${"x".repeat(20 * 1024 * 1024)}"}}]}\n\n`])
    }
  ]
  for (const { name, scheme, reply } of cases) {
    it(`${scheme}: ${name}`, async () => {
      const server = await serve(scheme, [reply])
      const worker = Worker.create({ client: clientFor(scheme, server, { timeouts: { idleMs: 400, firstEventMs: 2_000 } }) })
      const settled = await settleRun(worker, worker.run("hi"))
      expectSettledAsWorker(settled)
      expect(settled.kind, show(settled)).toBe("rejected")
      // Nothing of a failed response enters history.
      expect(worker.history().filter((item) => item.type === "message" && item.role === "assistant")).toHaveLength(0)
    })
  }

  it("openai-chat: a 10 MiB error body ends as a WorkerError whose text quotes a bounded prefix", async () => {
    const server = await serve("openai-chat", [plain(400, "application/json", JSON.stringify({ error: { message: "e".repeat(10 * 1024 * 1024) } }))])
    const worker = Worker.create({ client: clientFor("openai-chat", server) })
    const settled = await settleRun(worker, worker.run("hi"))
    expectSettledAsWorker(settled)
    expect(settled.kind).toBe("rejected")
    if (settled.kind !== "rejected") return
    expect(isWorkerError(settled.error)).toBe(true)
    expect(String((settled.error as { message?: unknown }).message).length).toBeLessThan(256 * 1024)
  })
})
