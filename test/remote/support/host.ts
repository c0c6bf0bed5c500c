import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { sseText } from "../../../src/testing/index.ts"
import { type ToolHost, type ToolHostOptions, startToolHost } from "../../../src/remote/index.ts"

/** Hosts and servers started by a test file, closed after each test. */
const open: Array<{ close(): Promise<void> }> = []

export const closeAll = async (): Promise<void> => {
  await Promise.all(open.splice(0).map((entry) => entry.close()))
}

/** A host on an ephemeral loopback port; its log lines are kept for assertions instead of printed. */
export const startHost = async (options: ToolHostOptions = {}): Promise<ToolHost & { readonly logs: Array<string> }> => {
  const logs: Array<string> = []
  const host = await startToolHost({ port: 0, env: {}, log: (line) => void logs.push(line), ...options })
  open.push(host)
  return Object.assign(host, { logs })
}

export interface ApiResponse {
  readonly status: number
  readonly headers: Headers
  readonly body: Record<string, unknown> & { readonly ok?: boolean; readonly error?: string; readonly instance_id?: string }
}

/** One JSON request to the host. */
export const api = async (
  host: { readonly url: string },
  method: string,
  path: string,
  body?: unknown,
  headers: Readonly<Record<string, string>> = {}
): Promise<ApiResponse> => {
  const response = await fetch(`${host.url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: JSON.parse(text) as ApiResponse["body"] }
}

export interface RecordedCall {
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly closed: Promise<void>
}

export interface CallbackServer {
  readonly url: string
  readonly port: number
  readonly calls: Array<RecordedCall>
  close(): Promise<void>
}

/** A plugin's callback endpoint: a real HTTP server on 127.0.0.1 answering with `handler`. */
export const startCallbackServer = async (
  handler: (request: IncomingMessage, response: ServerResponse, body: string) => void | Promise<void>,
  path = "/tool_invoke"
): Promise<CallbackServer> => {
  const calls: Array<RecordedCall> = []
  const server: Server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    const closed = new Promise<void>((resolve) => response.once("close", () => resolve()))
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      calls.push({ headers: request.headers, body, closed })
      void handler(request, response, body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  const entry = {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
  open.push(entry)
  return entry
}

export const json = (response: ServerResponse, status: number, value: unknown): void => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify(value))
}

/** A Chat Completions stream whose one choice calls `name` with `args`. */
export const chatToolCall = (name: string, args: string, callId = "call_1"): string =>
  sseText([
    { data: JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { role: "assistant", content: null, tool_calls: [{ index: 0, id: callId, type: "function", function: { name, arguments: "" } }] }, finish_reason: null }] }) },
    { data: JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: args } }] }, finish_reason: null }] }) },
    { data: JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] }) },
    { data: JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 } }) },
    { data: "[DONE]" }
  ])

/** A Chat Completions stream answering `text`. */
export const chatText = (text: string): string =>
  sseText([
    { data: JSON.stringify({ id: "c2", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { role: "assistant", content: text }, finish_reason: null }] }) },
    { data: JSON.stringify({ id: "c2", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) },
    { data: JSON.stringify({ id: "c2", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage: { prompt_tokens: 40, completion_tokens: 7, total_tokens: 47 } }) },
    { data: "[DONE]" }
  ])

export const weatherTool = (callbackUrl: string, extra: Readonly<Record<string, unknown>> = {}) => ({
  name: "get_weather",
  description: "Weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  callback_url: callbackUrl,
  role: null,
  source: "my_plugin",
  timeout_seconds: 30,
  ...extra
})
