import type { ToolContext } from "./tool.ts"

/**
 * A per-call channel from a typed tool to whoever called it: the value its handler returned, before it was
 * rendered to text. The Worker opens one only for calls of a tool that has a typed PostToolCall hook; keyed by
 * the call's context object, so it lives exactly as long as the call.
 */
const observers = new WeakMap<ToolContext, (value: unknown) => void>()
/**
 * Whether any call was ever observed: until then every typed call skips the lookup (most programs register no
 * typed PostToolCall hook at all; decision 0086). Never reset, since entries leave the table only with their
 * contexts.
 */
let observed = false

/** Called by the tool server for a call made with `observeOutput`. */
export const observeOutput = (context: ToolContext, observer: (value: unknown) => void): void => {
  observed = true
  observers.set(context, observer)
}

/** The observer of this call, if its caller asked for the value (one WeakMap lookup once any call was observed). */
export const outputObserver = (context: ToolContext): ((value: unknown) => void) | undefined =>
  observed ? observers.get(context) : undefined
