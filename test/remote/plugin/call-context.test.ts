import { afterEach, describe, expect, it } from "vitest"
import { signedCallbackHeaders } from "../../../src/remote/signing.ts"
import { remoteTool, startPlugin, type RemoteCallContext } from "../../../src/remote/plugin/index.ts"
import { ContractHost, eventually } from "../../../bench/support/contract-host.ts"

/**
 * The context a handler gets: its abort signal is made on first read. These pin what that must not change — a
 * synchronous handler sees a live signal, a spread context keeps it, and an abort that came before the first
 * read (the host gave up while the handler was busy elsewhere) is there when the handler looks.
 */

let cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined)
  cleanup = []
})

const signedPost = (reg: { callbackUrl: string; secret: string }, name: string, signal?: AbortSignal) => {
  const body = JSON.stringify({ name, arguments: {}, call_id: "c1", raw_arguments: "{}" })
  return fetch(reg.callbackUrl, {
    method: "POST",
    ...(signal === undefined ? {} : { signal }),
    headers: { "content-type": "application/json", ...signedCallbackHeaders(reg.secret, body) },
    body
  })
}

describe("a handler's call context", () => {
  it("is complete for synchronous handlers, survives a spread, and carries an abort that came before its signal was read", async () => {
    const seen: Array<unknown> = []
    let release!: () => void
    const busy = new Promise<void>((resolve) => (release = resolve))
    const lateReads: Array<{ aborted: boolean; reason: unknown }> = []
    const tools = [
      remoteTool({
        name: "sync_reader",
        execute: (_a, context) => {
          const copy: RemoteCallContext = { ...context }
          seen.push({ aborted: context.signal.aborted, spread: copy.signal instanceof AbortSignal, same: copy.signal === context.signal, name: copy.name, callId: copy.callId })
          return "ok"
        }
      }),
      remoteTool({ name: "sync_ignorer", execute: () => "fine" }),
      remoteTool({
        name: "late_reader",
        timeoutSeconds: 30,
        execute: async (_a, context) => {
          await busy
          lateReads.push({ aborted: context.signal.aborted, reason: String(context.signal.reason) })
          return "late"
        }
      })
    ]
    const host = await ContractHost.start()
    cleanup.push(() => host.close())
    const plugin = await startPlugin({ source: "ctx", tools, host: host.url, shutdown: { signals: false, deadlineMs: 500 }, healthIntervalMs: 1000 })
    cleanup.push(() => plugin.stop())
    await plugin.ready
    expect((await host.call("sync_reader", {})).body).toEqual({ output: "ok" })
    expect(seen).toEqual([{ aborted: false, spread: true, same: true, name: "sync_reader", callId: expect.any(String) }])
    expect((await host.call("sync_ignorer", {})).body).toEqual({ output: "fine" })
    // The host gives up while the handler waits on something else; the handler reads its signal only after.
    const gaveUp = new AbortController()
    const call = signedPost(host.tools.get("late_reader")!, "late_reader", gaveUp.signal).catch(() => undefined)
    await new Promise((resolve) => setTimeout(resolve, 50))
    gaveUp.abort()
    await call
    await new Promise((resolve) => setTimeout(resolve, 50))
    release()
    await eventually(() => lateReads.length === 1, "the late read")
    expect(lateReads[0]).toEqual({ aborted: true, reason: "Error: the host closed the callback" })
  })
})
