import { existsSync } from "node:fs"
import { isAbsolute } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { ArgumentSchema, InferArguments } from "../schema/codec.ts"
import { type TypedToolDefinition, defineTool } from "../tool/define-tool.ts"
import { toolFailure } from "../tool/tool-failure.ts"
import { type IsolationPool, defaultIsolationPool } from "./isolation-pool.ts"

/** What the thread's handler receives besides the arguments. No signal: stopping it means ending its thread. */
export interface IsolatedContext {
  readonly callId: string
}

/**
 * The type of an export that `defineIsolatedTool` can run: it receives the decoded arguments (a structured
 * clone of them) and returns a string, a JSON-serialisable value, `toolFailure(…)`, or a promise of one.
 */
export type IsolatedHandler<A> = (args: A, context: IsolatedContext) => unknown

/**
 * What `defineIsolatedTool` takes: name, description and schema as for `defineTool`, and the handler as a module and export name.
 */
export interface IsolatedToolConfig<S extends ArgumentSchema> {
  readonly name: string
  readonly description: string
  /** Decoded and validated in the calling thread, as for `defineTool`; the handler gets a clone of the result. */
  readonly parameters?: S
  /**
   * The handler's module: a `file:` URL (typically `new URL("./my-tool.js", import.meta.url)`) or an absolute
   * path. A worker thread cannot receive a closure, so the handler is named by module and export instead.
   */
  readonly module: URL | string
  /** The export to call; `"default"` when omitted. */
  readonly export?: string
  /** The pool to run in; a shared default pool when omitted. */
  readonly pool?: IsolationPool
  /** As for `defineTool`: cap in UTF-8 bytes on the output or error text (default: the Worker's, else 100 KiB). */
  readonly maxOutputBytes?: number
}

const moduleUrl = (module: URL | string): string => {
  const url = module instanceof URL ? module : module.startsWith("file:") ? new URL(module) : isAbsolute(module) ? pathToFileURL(module) : undefined
  if (url === undefined || url.protocol !== "file:") {
    throw new TypeError(`defineIsolatedTool: module must be a file: URL or an absolute path, got ${JSON.stringify(String(module)).slice(0, 200)}`)
  }
  // Checked here so a typo fails at definition, not at the first call inside a thread.
  if (!existsSync(fileURLToPath(url))) throw new TypeError(`defineIsolatedTool: module ${url.href} does not exist`)
  return url.href
}

/**
 * Declares a tool whose handler runs in a worker thread of an `IsolationPool`. Its deadline is hard: when the
 * call's signal aborts (the Worker's `toolTimeoutMs` / `toolTimeouts`, `callTool`'s `timeoutMs`, or
 * cancellation), the thread is terminated — even a synchronous busy loop stops — and the pool replaces it.
 *
 * @example
 * // sum.js:  export const sum = ({ upTo }) => { let s = 0; for (let i = 0; i <= upTo; i++) s += i; return s }
 * const sum = defineIsolatedTool({
 *   name: "sum",
 *   description: "Sums 0..upTo",
 *   parameters: z.object({ upTo: z.int().min(0) }),
 *   module: new URL("./sum.js", import.meta.url),
 *   export: "sum"
 * })
 * worker.registerTool(sum)
 *
 * Gotchas: arguments and results cross threads by structured clone (decoded values that are class instances
 * lose their prototype, functions cannot cross); a terminated handler gets no chance to clean up (`finally`
 * blocks do not run; child processes it started keep running); each call costs a thread hop (see
 * docs/benchmarks.md).
 */
export function defineIsolatedTool<S extends ArgumentSchema = ArgumentSchema>(
  config: IsolatedToolConfig<S>
): TypedToolDefinition<InferArguments<S>> {
  const module = moduleUrl(config.module)
  const exportName = config.export ?? "default"
  const explicitPool = config.pool
  return defineTool<S, undefined>({
    name: config.name,
    description: config.description,
    ...(config.parameters === undefined ? {} : { parameters: config.parameters }),
    ...(config.maxOutputBytes === undefined ? {} : { maxOutputBytes: config.maxOutputBytes }),
    execute: (args, context) =>
      (explicitPool ?? defaultIsolationPool())
        .run({ module, exportName, args, callId: context.callId }, context.signal)
        .then((reply) => (reply.ok ? reply.output : toolFailure(reply.message)))
  })
}
