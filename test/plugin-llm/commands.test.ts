import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { createPluginLlmHandler } from "../../src/plugin-llm/http-handler.ts"
import { CommandRegistry } from "../../src/plugin-llm/plugin-context.ts"
import { replay, runtimeOn } from "./support.ts"

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()))
})

/** A handler that never answers and records the signal it was given. */
const hanging = () => {
  const seen: Array<AbortSignal> = []
  return { seen, handler: (_args: string, { signal }: { readonly signal: AbortSignal }) => { seen.push(signal); return new Promise<string>(() => undefined) } }
}

describe("a command's cancel signal", () => {
  it("is handed to the handler, unfired, and the answer comes back as before", async () => {
    const commands = new CommandRegistry()
    const signals: Array<AbortSignal> = []
    commands.add("p", { name: "echo", handler: (args, { signal }) => { signals.push(signal); return args.toUpperCase() } })
    expect(await commands.run("echo", "hi")).toEqual({ ok: true, output: "HI" })
    expect(await commands.run("echo", "hi", { signal: new AbortController().signal })).toEqual({ ok: true, output: "HI" })
    expect(signals).toHaveLength(2)
    expect(signals.every((s) => s instanceof AbortSignal && !s.aborted)).toBe(true)
  })

  it("ends the run with 499 at once when the caller aborts, even if the handler ignores its signal", async () => {
    const commands = new CommandRegistry()
    const { seen, handler } = hanging()
    commands.add("p", { name: "stall", handler })
    const caller = new AbortController()
    const run = commands.run("stall", "", { signal: caller.signal })
    await Promise.resolve()
    caller.abort()
    expect(await run).toEqual({ ok: false, status: 499, error: "/stall was cancelled" })
    expect(seen[0]?.aborted).toBe(true)
  })

  it("never starts the handler for a caller that has already given up", async () => {
    const commands = new CommandRegistry()
    const { seen, handler } = hanging()
    commands.add("p", { name: "stall", handler })
    expect(await commands.run("stall", "", { signal: AbortSignal.abort() })).toEqual({ ok: false, status: 499, error: "/stall was cancelled" })
    expect(seen).toHaveLength(0)
  })

  it("a handler that fails because it was cancelled reports the cancellation, not a failure", async () => {
    const commands = new CommandRegistry()
    commands.add("p", {
      name: "polite",
      handler: (_args, { signal }) => new Promise<string>((_resolve, reject) => signal.addEventListener("abort", () => reject(new Error("stopped")), { once: true }))
    })
    const caller = new AbortController()
    const run = commands.run("polite", "", { signal: caller.signal })
    caller.abort()
    expect(await run).toEqual({ ok: false, status: 499, error: "/polite was cancelled" })
  })

  it("stops the plugin's model call when passed on to ctx.llm", async () => {
    const server = await replay("openai-chat", [{ kind: "no_headers" }])
    const { runtime, audit } = runtimeOn(server)
    await runtime.load({
      manifest: { name: "summary" },
      register: (ctx) =>
        ctx.registerCommand({
          name: "sum",
          handler: async (args, { signal }) => (await ctx.llm.complete({ messages: [{ role: "user", content: args }], signal })).text
        })
    })
    const caller = new AbortController()
    const run = runtime.commands.run("sum", "a long text", { signal: caller.signal })
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    caller.abort()
    expect(await run).toEqual({ ok: false, status: 499, error: "/sum was cancelled" })
    // The provider sees the client hang up, and the call is audited as cancelled.
    await server.requests[0]?.disconnected
    while (audit.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    expect(audit[0]?.outcome).toBe("PluginLlmCancelled")
  })

  it("fires when the HTTP client of POST /api/commands/<name> hangs up", async () => {
    const server = await replay("openai-chat", [{ kind: "no_headers" }])
    const { runtime } = runtimeOn(server)
    const { seen, handler } = hanging()
    await runtime.load({ manifest: { name: "stall" }, register: (ctx) => ctx.registerCommand({ name: "stall", handler }) })
    const lane = createPluginLlmHandler({ runtime, pluginForToken: () => undefined })
    const answers: Array<number> = []
    const http = createServer(async (req: IncomingMessage, res: ServerResponse) => {
      for await (const _ of req) void _
      const abort = new AbortController()
      res.on("close", () => abort.abort())
      const answer = await lane.handle({ method: "POST", path: "/api/commands/stall", headers: req.headers, body: {}, signal: abort.signal })
      answers.push(answer.status)
      res.writeHead(answer.status).end()
    })
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
    closers.push(() => new Promise((resolve) => http.close(() => resolve())))
    const client = new AbortController()
    const request = fetch(`http://127.0.0.1:${(http.address() as AddressInfo).port}/`, { method: "POST", body: "{}", signal: client.signal }).catch(() => "aborted")
    while (seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    client.abort()
    expect(await request).toBe("aborted")
    while (answers.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    expect(answers).toEqual([499])
    expect(seen[0]?.aborted).toBe(true)
  })
})
