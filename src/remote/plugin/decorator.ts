import type { ArgumentSchema, InferArguments } from "../../schema/codec.ts"
import { PluginConfigError } from "./plugin-error.ts"
import { makeRemoteTool, type NoArguments, type RemoteCallContext, type RemoteTool, type RemoteToolOptions } from "./remote-tool.ts"

/** `@llmTool(...)` options: the tool's name defaults to the method's. */
export interface LlmToolOptions<S extends ArgumentSchema> extends Omit<RemoteToolOptions<S>, "name"> {
  /** The name the model sees (1–64 of `[A-Za-z0-9_.-]`); default the method's name. */
  readonly name?: string
}

/**
 * What `@llmTool(...)` returns: a standard method decorator. The method must accept the arguments the schema
 * decodes to (and may take the call context second), so a mismatch between schema and method does not compile.
 *
 * @typeParam S - the tool's argument schema.
 * @typeParam This - the class (or, for a static method, its constructor) the method belongs to.
 * @typeParam M - the decorated method's type.
 */
export type LlmToolDecorator<S extends ArgumentSchema> = <
  This extends object,
  M extends (this: This, args: InferArguments<S>, context: RemoteCallContext) => unknown
>(
  method: M,
  context: ClassMethodDecoratorContext<This, M>
) => void

type Handler = (args: unknown, context: RemoteCallContext) => unknown

/** One decorated method: its announcement (built once per class) and how to read the method off an object. */
interface DeclaredMethod {
  readonly tool: RemoteTool
  readonly read: (self: object) => unknown
}

/**
 * Tools per object, filled by the decorators' initializers as each instance (or, for static methods, the class)
 * is constructed. Keyed weakly so a discarded plugin object takes its entries with it. Not `context.metadata`:
 * TypeScript's emit leaves it undefined where `Symbol.metadata` is missing (Node 20), esbuild's does not.
 */
const declared = new WeakMap<object, Array<DeclaredMethod>>()

/**
 * The seed's `@llm_tool`, as a TC39 standard decorator (TypeScript 5+ / 7 without `experimentalDecorators`,
 * tsx, esbuild). The method receives the decoded, typed arguments and the call context; the compiler checks that
 * it accepts what the schema decodes to. Hand the object (or, for static methods, the class) to `startPlugin`.
 *
 * Gotchas: the schema is compiled when the class is defined, so a bad schema or name throws `PluginConfigError`
 * there; the method is looked up on the object at each call, so a subclass override is what runs.
 *
 * @example
 * ```ts
 * import { llmTool, startPlugin } from "llm-worker/remote/plugin"
 * import { z } from "zod"
 *
 * class Weather {
 *   @llmTool({ description: "Weather for a city", parameters: z.object({ city: z.string() }) })
 *   get_weather({ city }: { city: string }) { return { city, temp_c: 22 } }
 * }
 * await startPlugin({ source: "plugin:weather", tools: [new Weather()] })
 * ```
 */
export function llmTool<S extends ArgumentSchema = NoArguments>(options: LlmToolOptions<S> = {}): LlmToolDecorator<S> {
  return <This extends object, M extends (this: This, args: InferArguments<S>, context: RemoteCallContext) => unknown>(
    _method: M,
    context: ClassMethodDecoratorContext<This, M>
  ): void => {
    if (context.kind !== "method") throw new PluginConfigError({ field: "name", message: "@llmTool decorates methods only" })
    const name = options.name ?? (typeof context.name === "string" ? context.name : undefined)
    if (name === undefined) {
      throw new PluginConfigError({ field: "name", message: "@llmTool on a symbol-named method needs an explicit name" })
    }
    // The handler slot is filled per object by `toolsOf`; this one only exists so the announcement is checked now.
    const tool = makeRemoteTool({ ...options, name } as RemoteToolOptions<S>, unbound) as RemoteTool
    const read = (self: object): unknown => context.access.get(self as This)
    context.addInitializer(function (this: This) {
      const list = declared.get(this)
      const entry: DeclaredMethod = { tool, read }
      if (list === undefined) declared.set(this, [entry])
      else list.push(entry)
    })
  }
}

const unbound = (): never => {
  throw new Error("an @llmTool method must be served through toolsOf(object)")
}

/**
 * The tools an object's `@llmTool` methods declare (a class for static methods), each bound to that object.
 * Empty when it has none.
 */
export const toolsOf = (target: object): ReadonlyArray<RemoteTool> =>
  (declared.get(target) ?? []).map(({ tool, read }) => {
    const handler: Handler = (args, context) => {
      const method = read(target)
      if (typeof method !== "function") throw new TypeError(`${tool.name}: the method is no longer a function`)
      return (method as Handler).call(target, args, context)
    }
    return Object.freeze({ ...tool, handler })
  })
