import { Effect } from "effect"
import { z } from "zod"
import { createLlmClient, defineTool, DuplicateName, ToolServer, Worker } from "llm-worker"

let factoryRuns = 0
const add = defineTool({
  name: "add",
  description: "Adds two numbers",
  parameters: z.object({ a: z.number(), b: z.number() }),
  state: () => ++factoryRuns,
  execute: ({ a, b }) => a + b
})
const slow = defineTool({
  name: "slow",
  description: "Waits until cancelled",
  execute: (_args, { signal }) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("stopped"))))
})
const broken = defineTool({ name: "broken", description: "Always fails", execute: () => { throw new Error("disk full") } })

// Registration goes through a Mutable worker: factories run now, once, and are linted for its provider.
const server = new ToolServer()
const client = createLlmClient({ provider: "ollama", model: "qwen3" }) // no request is sent in this example
const worker = Worker.create({ client, toolServer: server })
const report = worker.registerTools([add, slow, broken])
console.log("registered:", report.registered.map((spec) => spec.name).join(","), "warnings:", report.warnings.length)
console.log("factory runs:", factoryRuns)
try {
  worker.registerTool(add)
} catch (error) {
  console.log("duplicate:", error instanceof DuplicateName, (error as DuplicateName).message)
}

// Handles share the server's tools; they can call and list, never register.
const handle = server.handle()
console.log("names:", handle.names().join(","), "version:", handle.version, "same array:", handle.toolDefinitionsSorted() === handle.toolDefinitionsSorted())

const attempt = (name: string, args: string, options?: { timeoutMs?: number; signal?: AbortSignal }) =>
  handle.callTool(name, args, options).then(
    (output) => `ok ${output}`,
    (error: { _tag: string; message: string }) => `${error._tag}: ${error.message}`
  )
console.log("call:", await attempt("add", '{"a":2,"b":3}'))
console.log("invalid:", await attempt("add", '{"a":"2"}'))
console.log("failed:", await attempt("broken", "{}"))
console.log("unknown:", await attempt("nope", "{}"))
console.log("timeout:", await attempt("slow", "{}", { timeoutMs: 50 }))
const controller = new AbortController()
setTimeout(() => controller.abort(), 20)
console.log("cancel:", await attempt("slow", "{}", { signal: controller.signal }))

// The same call as an Effect, with a typed failure channel.
const effect = handle.callToolEffect("nope", "{}").pipe(Effect.catch((error) => Effect.succeed(error._tag)))
console.log("effect:", await Effect.runPromise(effect))
