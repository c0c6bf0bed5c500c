import type { ArgumentSchema, InferArguments } from "../schema/codec.ts"
import { type TypedToolDefinition, defineTool } from "./define-tool.ts"
import type { ToolContext } from "./tool.ts"

/** How one method of the target is exposed as a tool. */
export interface MethodToolConfig<S extends ArgumentSchema> {
  readonly description: string
  readonly parameters?: S
  /** The tool name; the method name when omitted. */
  readonly name?: string
}

type SchemaOf<C> = C extends { readonly parameters: infer S extends ArgumentSchema } ? S : never

/** The decoded argument type of one entry: `{}` for a method declared without parameters. */
type ArgsOf<C> = [SchemaOf<C>] extends [never] ? Record<string, never> : InferArguments<SchemaOf<C>>

/**
 * Checks, per entry, that the key names a method of the target which accepts the decoded arguments. A
 * mismatch turns the entry's expected type into an explanatory string, so the compiler error says why.
 */
export type CheckedMethods<T, M> = {
  readonly [K in keyof M]: K extends keyof T
    ? T[K] extends (args: ArgsOf<M[K]>, context: ToolContext) => unknown
      ? M[K]
      : "this method does not accept the arguments its schema decodes to"
    : "not a method of the target"
}

/**
 * The group form (what `#[tool_registry]` does for an impl block): exposes several methods of one object or
 * class instance as tools sharing that object as their context. Methods are called with `this` bound to the
 * target and receive the decoded arguments and the call context.
 *
 * @example
 * class Notes {
 *   private items: string[] = []
 *   add(args: { text: string }) { this.items.push(args.text); return `saved #${this.items.length}` }
 *   list() { return this.items }
 * }
 * const tools = toolGroup(new Notes(), {
 *   add: { description: "Save a note", parameters: z.object({ text: z.string() }) },
 *   list: { description: "List saved notes" }
 * })
 * worker.registerTools(Object.values(tools))
 */
export function toolGroup<T extends object, const M extends { readonly [K in keyof M]: MethodToolConfig<ArgumentSchema> }>(
  target: T,
  methods: M & CheckedMethods<T, M>
): { readonly [K in keyof M]: TypedToolDefinition<ArgsOf<M[K]>> } {
  const out: Record<string, TypedToolDefinition<unknown>> = {}
  for (const key of Object.keys(methods)) {
    const config = (methods as Record<string, MethodToolConfig<ArgumentSchema>>)[key] as MethodToolConfig<ArgumentSchema>
    const method = (target as Record<string, unknown>)[key]
    if (typeof method !== "function") throw new TypeError(`toolGroup: "${key}" is not a method of the target`)
    const definition = defineTool({
      name: config.name ?? key,
      description: config.description,
      ...(config.parameters === undefined ? {} : { parameters: config.parameters }),
      execute: (args: unknown, context: ToolContext) => (method as (a: unknown, c: ToolContext) => unknown).call(target, args, context)
    }) as TypedToolDefinition<unknown>
    // defineProperty, not assignment: a method named "__proto__" must become a tool, not the result's prototype.
    Object.defineProperty(out, key, { value: definition, enumerable: true, writable: true, configurable: true })
  }
  return Object.freeze(out) as { readonly [K in keyof M]: TypedToolDefinition<ArgsOf<M[K]>> }
}
