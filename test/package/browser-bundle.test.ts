import { builtinModules } from "node:module"
import { fileURLToPath } from "node:url"
import { createContext, runInContext } from "node:vm"
import { build, type Plugin } from "esbuild"
import { describe, expect, it } from "vitest"

/**
 * The main entry must bundle for browsers and edge runtimes: no Node built-in reachable from `llm-worker`, no
 * Node global used on the paths that run there, nothing done at import time. Bundled with esbuild's JS API
 * exactly as a consumer's bundler would see the package (through its `exports` and `"sideEffects": false`), from
 * the sources (`@llm-worker/source`) so that the check never runs against a stale build.
 */

const root = fileURLToPath(new URL("../..", import.meta.url))
const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]))

/** Records every Node built-in any module asks for, with the module that asked. */
const nodeImports = (found: Array<string>): Plugin => ({
  name: "node-imports",
  setup(plugin) {
    plugin.onResolve({ filter: /.*/ }, (args) => {
      if (!builtins.has(args.path) && !args.path.startsWith("node:")) return undefined
      found.push(`${args.path} imported by ${args.importer.slice(root.length)}`)
      return { path: args.path, external: true }
    })
  }
})

const bundle = async (contents: string, options: { readonly format?: "esm" | "iife"; readonly minify?: boolean } = {}) => {
  const found: Array<string> = []
  const result = await build({
    stdin: { contents, resolveDir: root, sourcefile: "consumer.js", loader: "js" },
    bundle: true,
    platform: "browser",
    format: options.format ?? "esm",
    ...(options.format === "iife" ? { globalName: "llmWorker" } : {}),
    // Ours first; "module" is listed because esbuild drops its default conditions when any are given.
    conditions: ["@llm-worker/source", "module"],
    minify: options.minify ?? true,
    write: false,
    logLevel: "silent",
    plugins: [nodeImports(found)]
  })
  return { found, code: result.outputFiles[0]?.text ?? "", warnings: result.warnings }
}

/** What a browser or edge runtime offers (the WinterTC minimum common API), and nothing of Node's. */
const webGlobals = () => ({
  AbortController,
  AbortSignal,
  Blob,
  DOMException,
  Event,
  EventTarget,
  Headers,
  ReadableStream,
  Request,
  Response,
  TextDecoder,
  TextDecoderStream,
  TextEncoder,
  TextEncoderStream,
  TransformStream,
  URL,
  URLSearchParams,
  WritableStream,
  atob,
  btoa,
  clearInterval,
  clearTimeout,
  console,
  crypto,
  fetch,
  performance,
  queueMicrotask,
  setInterval,
  setTimeout,
  structuredClone
})

/** Globals that dependencies create on import (zod's schema registry), as opposed to this package's own. */
const DEPENDENCY_GLOBALS = new Set(["__zod_globalRegistry"])

describe("the main entry bundles for the browser", () => {
  const whole = bundle(`export * from "llm-worker"`)

  it("reaches no Node built-in, from any export", async () => {
    const { found, code } = await whole
    expect(found).toEqual([])
    expect(code.length).toBeGreaterThan(0)
  })

  it("is free of side effects: importing nothing, or only for its effects, bundles to nothing", async () => {
    expect((await bundle(`import {} from "llm-worker"`)).code).toBe("")
    expect((await bundle(`import "llm-worker"`)).code).toBe("")
  })

  it("tree-shakes: one tool definition is a fraction of the whole entry", async () => {
    const all = (await whole).code.length
    const oneTool = (await bundle(`import { defineTool } from "llm-worker"; console.log(defineTool)`)).code.length
    // Sizes are reported, not asserted beyond "smaller": they follow the dependencies' versions.
    console.log(`browser bundle, minified: whole entry ${all} bytes, defineTool alone ${oneTool} bytes`)
    expect(oneTool).toBeLessThan(all)
  })

  it("the subpaths that need Node say so: llm-worker/testing reaches node:http", async () => {
    const { found } = await bundle(`export * from "llm-worker/testing"`)
    expect(found).toContain("node:http imported by src/testing/replay-provider.ts")
  })

  it("runs with web globals only: imports without effects, then a tool and a worker run over a fetch that streams SSE", async () => {
    const { code } = await bundle(`export * from "llm-worker"`, { format: "iife", minify: false })
    const effects: Array<string> = []
    const globals = webGlobals()
    const context = createContext({
      ...globals,
      setTimeout: (...args: Parameters<typeof setTimeout>) => (effects.push("setTimeout"), globals.setTimeout(...args)),
      setInterval: (...args: Parameters<typeof setInterval>) => (effects.push("setInterval"), globals.setInterval(...args)),
      fetch: (...args: Parameters<typeof fetch>) => (effects.push("fetch"), globals.fetch(...args)),
      console: { log: () => effects.push("console"), warn: () => effects.push("console"), error: () => effects.push("console") }
    })
    const before = new Set(Object.keys(context))
    runInContext(code, context)
    expect(Object.keys(context).filter((key) => !before.has(key) && !DEPENDENCY_GLOBALS.has(key))).toEqual(["llmWorker"])
    expect(effects).toEqual([])

    // An OpenAI Chat stream in its genuine wire shape: one tool call, then (second request) the answer.
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
    const replies = [
      chunk({ role: "assistant", tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "add", arguments: '{"a":2,"b":3}' } }] }) +
        chunk({}, "tool_calls") +
        "data: [DONE]\n\n",
      chunk({ role: "assistant", content: "The sum is 5." }) + chunk({}, "stop") + "data: [DONE]\n\n"
    ]
    const bodies: Array<string> = []
    context["scriptedFetch"] = async (_url: string, init: { readonly body: string }) => {
      bodies.push(init.body)
      return new Response(replies[bodies.length - 1] ?? "", { status: 200, headers: { "content-type": "text/event-stream" } })
    }
    const run = runInContext(`(async () => {
      const { defineTool, Worker, createLlmClient, ToolServer } = llmWorker
      const add = defineTool({
        name: "add",
        description: "Adds two numbers",
        parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"], additionalProperties: false },
        execute: async ({ a, b }) => a + b
      })
      const client = createLlmClient({ provider: "openai", model: "gpt-4.1-mini", apiKey: "k", fetch: scriptedFetch })
      const server = new ToolServer()
      const worker = Worker.create({ client, toolServer: server })
      worker.registerTool(add)
      const direct = await server.handle().callTool("add", '{"a":1,"b":1}')
      const result = await worker.lock().run("What is 2 + 3?")
      return { direct, status: result.status, text: result.items.at(-1).content?.[0]?.text ?? JSON.stringify(result.items.at(-1)) }
    })()`, context) as Promise<{ readonly direct: string; readonly status: string; readonly text: string }>
    const outcome = await run
    expect(outcome).toEqual({ direct: "2", status: "finished", text: "The sum is 5." })
    expect(bodies).toHaveLength(2)
    expect(bodies[1]).toContain('"tool_call_id":"call_1"')
  })
})
