import type { JsonSchema } from "../schema/json-schema.ts"
import { jsonTextDepth, tooDeepMessage } from "../schema/json-depth.ts"
import { restoreStrictArguments, usesOpenAiStrictMode } from "../schema/provider-tools.ts"
import type { ParsedArguments } from "../tool/tool.ts"
import type { CallArguments } from "../tool-server/tool-server.ts"
import { describeSafely } from "./describe-safely.ts"
import type { WorkerCore } from "./worker-core.ts"

/**
 * A call's argument text, checked and parsed once: the value goes to the tool (and the tool's decoder) as it is.
 * `text` is what the hooks and the history see; `args.text` is absent when the value no longer spells it (OpenAI
 * strict nulls removed), and a tool that only takes text then gets the value printed.
 */
export type PreparedArguments =
  | { readonly ok: true; readonly text: string; readonly args: CallArguments & object }
  | { readonly ok: false; readonly text: string; readonly problem: string }

/**
 * The usual prepared call, whose text still spells its value: the record is its own call arguments (`args` is
 * itself), so preparing a call allocates one object besides the parsed value. A value the strict restore changed
 * gets separate call arguments without the text.
 */
class SpelledArguments {
  readonly ok = true
  readonly text: string
  readonly value: ParsedArguments
  readonly depthBound: number
  readonly sizeBound: number

  constructor(text: string, value: ParsedArguments, depthBound: number) {
    this.text = text
    this.value = value
    this.depthBound = depthBound
    // Every value of the text (primitive, array, object) takes at least one character of it: its length bounds
    // their number, as the depth bound does their nesting. The tool's codec needs measure nothing again.
    this.sizeBound = text.length
  }

  get args(): CallArguments & object {
    return this
  }
}

/** Checks and parses one call's argument text the way every path of the Worker must: depth first, then JSON, then OpenAI strict restore. */
export const prepareArguments = (core: WorkerCore, schema: JsonSchema, text: string): PreparedArguments => {
  // Before anything recursive (the parser, strict-mode restore, re-serialisation, the tool's own decoder): the
  // model controls the nesting, and a few KiB of brackets overflow the stack of any recursive walker.
  const maxDepth = core.settings.maxArgumentDepth
  let depthBound = bracketBound(text, maxDepth)
  if (depthBound > maxDepth) {
    depthBound = jsonTextDepth(text, maxDepth)
    if (depthBound > maxDepth) return { ok: false, text, problem: tooDeepMessage("arguments", maxDepth) }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (thrown) {
    return { ok: false, text, problem: `the arguments are not valid JSON (${describeSafely(thrown)})` }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    const kind = parsed === null ? "null" : Array.isArray(parsed) ? "an array" : `a ${typeof parsed}`
    return { ok: false, text, problem: `the arguments must be a JSON object, got ${kind}` }
  }
  // OpenAI strict mode makes every property required and sends null for the optional ones: undo that, for the
  // tools that were sent strict (a non-strict tool's schema forbids that null, and the decoder must say so).
  // The restore only ever drops a `null`: text without one anywhere (not even inside a string) is the value as
  // parsed, already bounded by the depth check above, and needs no walk.
  if (core.client.scheme.startsWith("openai") && text.includes("null") && usesOpenAiStrictMode(schema)) {
    let restored: ParsedArguments
    try {
      restored = restoreStrictArguments(schema, parsed, { maxDepth }) as ParsedArguments
    } catch (thrown) {
      return { ok: false, text, problem: describeSafely(thrown) }
    }
    // Dropping nulls only lowers both bounds.
    if (restored === parsed) return new SpelledArguments(text, restored, depthBound)
    return { ok: true, text, args: { value: restored, text: undefined, depthBound, sizeBound: text.length } }
  }
  return new SpelledArguments(text, parsed as ParsedArguments, depthBound)
}

/**
 * An upper bound of `text`'s nesting, exact enough to settle `limit`: its length when that is at most `limit`,
 * else its number of opening brackets (counted inside strings too) up to `limit + 1`. Only text with more than
 * `limit` brackets can nest deeper than `limit`, and only it is scanned character by character. `indexOf` runs
 * natively, and most arguments have a few brackets and a long string or two.
 */
const bracketBound = (text: string, limit: number): number => {
  if (text.length <= limit) return text.length
  let count = 0
  for (let i = text.indexOf("{"); i !== -1; i = text.indexOf("{", i + 1)) if (++count > limit) return count
  for (let i = text.indexOf("["); i !== -1; i = text.indexOf("[", i + 1)) if (++count > limit) return count
  return count
}
