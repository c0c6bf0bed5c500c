/**
 * `llm-worker serve` under attack, as issue 20 found it: each attack runs against a fresh host (the built CLI in a
 * child process, the replay provider as the model) while this process asks `GET /api/health` every 20 ms. Reported
 * per attack: how the health answers were spread while the attack ran, the host's resident memory at its peak
 * over its idle level, and what the attacker got. A responsive host answers health in a few milliseconds whatever
 * the attack; the target is a maximum under 100 ms.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { type AddressInfo, connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ReplayProvider, sseText, startReplayProvider } from "#internal/testing/index"
import { formatBytes, markdownTable, printHeader } from "./support/report.ts"

const BIN = fileURLToPath(new URL("../bin/llm-worker.mjs", import.meta.url))
const READY = /llm-worker host listening on http:\/\/127\.0\.0\.1:(\d+)/

interface Host {
  readonly url: string
  readonly child: ChildProcess
  readonly provider: ReplayProvider
  stderr(): string
  close(): Promise<void>
}

const chunk = (id: string, delta: object, finish: string | null): string =>
  JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model: "gpt-4.1-mini-2025-04-14", choices: [{ index: 0, delta, finish_reason: finish }] })
const usageChunk = (id: string): string =>
  JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model: "gpt-4.1-mini-2025-04-14", choices: [], usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 } })

/** A Chat Completions stream calling each of `calls` (name, argument text) in one response. */
const chatToolCalls = (calls: ReadonlyArray<readonly [string, string]>): string =>
  sseText([
    ...calls.flatMap(([name, args], index) => [
      { data: chunk("c1", { ...(index === 0 ? { role: "assistant", content: null } : {}), tool_calls: [{ index, id: `call_${index}`, type: "function", function: { name, arguments: "" } }] }, null) },
      { data: chunk("c1", { tool_calls: [{ index, function: { arguments: args } }] }, null) }
    ]),
    { data: chunk("c1", {}, "tool_calls") },
    { data: usageChunk("c1") },
    { data: "[DONE]" }
  ])

const chatText = (text: string): string =>
  sseText([{ data: chunk("c2", { role: "assistant", content: text }, null) }, { data: chunk("c2", {}, "stop") }, { data: usageChunk("c2") }, { data: "[DONE]" }])

/**
 * A host whose first answer is a warm-up's: `warm` runs one ordinary turn before an attack, so what is measured
 * is the attack against a host that is already serving, not its first turn's module loading and compilation.
 */
const startHost = async (script: ReadonlyArray<string>): Promise<Host> => {
  const provider = await startReplayProvider({
    scheme: "openai-chat",
    script: [chatText(JSON.stringify({ s: "aaa" })), ...script].map((transcript) => ({ kind: "stream" as const, transcript }))
  })
  const dir = mkdtempSync(join(tmpdir(), "llm-worker-attacks-"))
  const config = join(dir, "llm-worker.yaml")
  writeFileSync(config, "roles:\n  default:\n    provider: openai\n    model: gpt-4.1-mini\n")
  const child = spawn(process.execPath, [BIN, "serve", "--config", config, "--port", "0"], {
    env: { PATH: process.env["PATH"] ?? "", OPENAI_API_KEY: "sk-bench-host-attacks", OPENAI_BASE_URL: provider.baseUrl },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stderr?.on("data", (data: Buffer) => void (stderr += data.toString("utf8")))
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (data: Buffer) => {
      stdout += data.toString("utf8")
      const ready = READY.exec(stdout)
      if (ready !== null) resolve(ready[1] as string)
    })
    child.once("exit", (code) => reject(new Error(`serve exited ${String(code)}: ${stderr}`)))
  })
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    provider,
    stderr: () => stderr,
    close: async () => {
      child.kill("SIGKILL")
      await provider.close()
    }
  }
}

/** One ordinary chat turn, or (with a token) one ordinary structured answer, before the attack. */
const warm = async (host: Host, token?: string): Promise<void> => {
  const answer =
    token === undefined
      ? await post(host, "/api/chat", { message: "hello" })
      : await post(host, "/api/llm/complete-structured", { instructions: "answer", input: [{ type: "text", text: "x" }], json_schema: PATTERN_SCHEMA, schema_name: "s" }, { "x-llm-worker-registrant-token": token })
  if (answer.status !== 200) throw new Error(`warm-up failed: ${JSON.stringify(answer.body)}`)
}

const post = async (host: Host, path: string, body: unknown, headers: Readonly<Record<string, string>> = {}): Promise<{ status: number; body: Record<string, unknown> }> => {
  const response = await fetch(`${host.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })
  const text = await response.text()
  return { status: response.status, body: JSON.parse(text) as Record<string, unknown> }
}

/** A plugin's callback endpoint answering every call with `answer` (raw JSON text). */
const startCallback = async (answer: string): Promise<{ url: string; close(): Promise<void> }> => {
  const server: Server = createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      response.writeHead(200, { "content-type": "application/json" })
      response.end(answer)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/tool`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

const rssOf = (pid: number): number => {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return line === null ? 0 : Number(line[1]) * 1024
}

interface Watch {
  readonly latencies: Array<number>
  peakRss: number
}

/**
 * The health poller runs in a process of its own: this one also serves the replay provider (up to 112 MiB of
 * stream) and the attackers, and its own busy loop must not be counted as the host's.
 */
const POLLER = `
const url = process.argv[1]
let done = false
process.on("SIGTERM", () => { done = true })
;(async () => {
  // The first request pays for this process's own start (the fetch machinery, the connection): not the host's.
  await fetch(url).then((r) => r.text())
  process.stdout.write("ready\\n")
  while (!done) {
    const started = performance.now()
    await fetch(url).then((r) => r.text()).catch(() => "")
    process.stdout.write((performance.now() - started).toFixed(3) + "\\n")
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
})()
`

/** Asks for health every 20 ms (from another process) and samples the host's RSS until `attack` settles. */
const watched = async <A>(host: Host, attack: () => Promise<A>): Promise<{ readonly result: A | Error; readonly watch: Watch; readonly idleRss: number }> => {
  const pid = host.child.pid as number
  const idleRss = rssOf(pid)
  const watch: Watch = { latencies: [], peakRss: idleRss }
  const poller = spawn(process.execPath, ["-e", POLLER, `${host.url}/api/health`], { stdio: ["ignore", "pipe", "inherit"] })
  let output = ""
  const ready = new Promise<void>((resolve) =>
    poller.stdout.on("data", (data: Buffer) => {
      output += data.toString("utf8")
      if (output.startsWith("ready\n")) resolve()
    })
  )
  await ready
  const sampler = setInterval(() => void (watch.peakRss = Math.max(watch.peakRss, rssOf(pid))), 20)
  const result = await attack().catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))))
  clearInterval(sampler)
  watch.peakRss = Math.max(watch.peakRss, rssOf(pid))
  const exited = new Promise((resolve) => poller.once("exit", resolve))
  poller.kill("SIGTERM")
  await exited
  watch.latencies.push(...output.split("\n").filter((line) => line !== "" && line !== "ready").map(Number))
  return { result, watch, idleRss }
}

const quantile = (values: ReadonlyArray<number>, q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
}

const clipped = (text: string, max = 90): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text).replaceAll("|", "\\|").replaceAll("\n", " ")

const rows: Array<Array<string>> = []
const record = (attack: string, run: { readonly result: unknown; readonly watch: Watch; readonly idleRss: number }, outcome: string): void => {
  const { latencies, peakRss } = run.watch
  rows.push([
    attack,
    String(latencies.length),
    `${quantile(latencies, 0.5).toFixed(1)} ms`,
    `${Math.max(...latencies).toFixed(1)} ms`,
    formatBytes(Math.max(0, peakRss - run.idleRss)),
    clipped(run.result instanceof Error ? `threw: ${run.result.message}` : outcome)
  ])
}

const HOSTILE = `${"a".repeat(27)}!`
const PATTERN_SCHEMA = { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } }, required: ["s"] }

const toolCallOutcome = (answer: { body: Record<string, unknown> }): string => {
  const calls = answer.body["tool_calls"] as ReadonlyArray<{ status?: string; output?: string }> | undefined
  const first = calls?.[0]
  return first === undefined ? JSON.stringify(answer.body) : `${String(calls?.length)} call(s), first ${first.status ?? "?"}: ${first.output ?? ""}`
}

const regexInRemoteTool = async (): Promise<void> => {
  const host = await startHost([chatToolCalls([["check", JSON.stringify({ s: HOSTILE })]]), chatText("done")])
  const callback = await startCallback('{"output":"ok"}')
  await warm(host)
  const registered = await post(host, "/api/tools/register", { name: "check", description: "checks s", parameters: PATTERN_SCHEMA, callback_url: callback.url, source: "attacker" })
  const run = await watched(host, async () => {
    if (registered.status !== 200) return registered
    return post(host, "/api/chat", { message: "check it" })
  })
  record("`pattern: ^(a+)+$` in a remote tool, 27 × a + ! from the model", run, run.result instanceof Error ? "" : registered.status !== 200 ? `registration refused: ${String(registered.body["error"])}` : toolCallOutcome(run.result as { body: Record<string, unknown> }))
  await callback.close()
  await host.close()
}

const regexInStructured = async (): Promise<void> => {
  const host = await startHost([chatText(JSON.stringify({ s: HOSTILE }))])
  const callback = await startCallback('{"output":"ok"}')
  const registered = await post(host, "/api/tools/register", { name: "note", description: "n", parameters: { type: "object", properties: {} }, callback_url: callback.url, source: "attacker" })
  const token = String(registered.body["registrant_token"] ?? registered.body["token"] ?? "")
  await warm(host, token)
  const run = await watched(host, () =>
    post(host, "/api/llm/complete-structured", { instructions: "answer", input: [{ type: "text", text: "x" }], json_schema: PATTERN_SCHEMA, schema_name: "s" }, { "x-llm-worker-registrant-token": token })
  )
  const answer = run.result instanceof Error ? undefined : (run.result as { status: number; body: Record<string, unknown> })
  record("`pattern: ^(a+)+$` in a `complete-structured` schema, matching answer", run, answer === undefined ? "" : `${answer.status}: ${JSON.stringify(answer.body["issues"] ?? answer.body["error"] ?? answer.body["content_type"])}`)
  await callback.close()
  await host.close()
}

const largeArguments = async (): Promise<void> => {
  const big = (i: number): string => JSON.stringify({ text: `${i}`.padEnd(7 * 1024 * 1024, "x") })
  const calls = Array.from({ length: 16 }, (_, i) => ["sink", big(i)] as const)
  const host = await startHost([chatToolCalls(calls), chatText("done")])
  const callback = await startCallback('{"output":"ok"}')
  await warm(host)
  await post(host, "/api/tools/register", { name: "sink", description: "takes text", parameters: { type: "object", properties: { text: { type: "string" } } }, callback_url: callback.url, source: "attacker" })
  const run = await watched(host, () => post(host, "/api/chat", { message: "go" }))
  const next = host.provider.requests[2]?.body.length
  record("16 tool calls × 7 MiB of arguments in one response", run, `${run.result instanceof Error ? "" : toolCallOutcome(run.result as { body: Record<string, unknown> })}; next request ${next === undefined ? "not sent" : formatBytes(next)}`)
  await callback.close()
  await host.close()
}

const deepCallbackAnswer = async (): Promise<void> => {
  const depth = 200_000
  const host = await startHost([chatToolCalls([["deep", "{}"]]), chatText("done")])
  const callback = await startCallback(`{"output":${"[".repeat(depth)}${"]".repeat(depth)}}`)
  await warm(host)
  await post(host, "/api/tools/register", { name: "deep", description: "d", parameters: { type: "object", properties: {} }, callback_url: callback.url, source: "attacker" })
  const run = await watched(host, () => post(host, "/api/chat", { message: "go" }))
  record("a callback answering 200,000 nested arrays", run, run.result instanceof Error ? "" : toolCallOutcome(run.result as { body: Record<string, unknown> }))
  await callback.close()
  await host.close()
}

const halfBodies = async (): Promise<void> => {
  const host = await startHost([chatText("unused")])
  const port = Number(new URL(host.url).port)
  const run = await watched(host, async () => {
    await Promise.all(
      Array.from({ length: 50 }, () =>
        new Promise<void>((resolve) => {
          const socket = connect(port, "127.0.0.1", () => {
            socket.write("POST /api/tools/register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"name\":")
            setTimeout(() => socket.destroy(), 50)
          })
          socket.on("close", () => resolve())
          socket.on("error", () => undefined)
        })
      )
    )
    await new Promise((resolve) => setTimeout(resolve, 500))
  })
  const lines = host.stderr().split("\n").filter((line) => line.includes("unexpected error")).length
  record("50 clients send half a body and hang up", run, `${lines} "unexpected error" lines on the host's stderr`)
  await host.close()
}

/** One connection trickling its request headers a byte every 500 ms; how long until the host closes it. */
const trickledHeaders = async (): Promise<void> => {
  const host = await startHost([chatText("unused")])
  const port = Number(new URL(host.url).port)
  const text = `GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${"x".repeat(200)}`
  const run = await watched(
    host,
    () =>
      new Promise<number>((resolve) => {
        const started = performance.now()
        let at = 0
        let timer: NodeJS.Timeout | undefined
        const socket = connect(port, "127.0.0.1", () => {
          timer = setInterval(() => {
            if (at < text.length) socket.write(text[at++] as string)
          }, 500)
        })
        const end = () => {
          clearInterval(timer)
          resolve(performance.now() - started)
        }
        socket.on("close", end)
        socket.on("error", () => undefined)
        setTimeout(() => socket.destroy(), 45_000)
      })
  )
  record("request headers trickled a byte per 500 ms", run, run.result instanceof Error ? "" : `closed by the host after ${((run.result as number) / 1000).toFixed(1)} s`)
  await host.close()
}

const main = async (): Promise<void> => {
  printHeader("The tool host under attack (health asked every 20 ms while each attack runs)")
  // LLMW_BENCH_ATTACKS=largeArguments,halfBodies runs only those (by function name).
  const chosen = (process.env["LLMW_BENCH_ATTACKS"] ?? "").split(",").filter((name) => name !== "")
  const attacks = [regexInRemoteTool, regexInStructured, largeArguments, deepCallbackAnswer, halfBodies, trickledHeaders]
  for (const attack of chosen.length === 0 ? attacks : attacks.filter((a) => chosen.includes(a.name))) await attack()
  console.log(markdownTable(["attack", "health answers", "health p50", "health max", "host RSS peak over idle", "what the attacker got"], rows))
}

await main()
