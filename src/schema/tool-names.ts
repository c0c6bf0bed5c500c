import { TaggedError } from "../error/tagged-error.ts"

/** The four tool-definition shapes a request can carry. */
export type ToolDialect = "openai-chat" | "openai-responses" | "anthropic" | "gemini"

/** A neutral tool name: what a tool is registered under, before any provider sees it. */
export const NEUTRAL_TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/

/**
 * What each provider accepts as a function name, from the published references:
 * OpenAI "a-z, A-Z, 0-9, underscores and dashes, max 64"; Anthropic `^[a-zA-Z0-9_-]{1,128}$`; Gemini
 * "a-z, A-Z, 0-9, underscores, colons, dots and dashes, max 64" and (Vertex AI docs) a leading letter or
 * underscore.
 */
const WIRE_RULE: Record<ToolDialect, { readonly pattern: RegExp; readonly text: string }> = {
  "openai-chat": { pattern: /^[A-Za-z0-9_-]{1,64}$/, text: "letters, digits, _ and -, at most 64" },
  "openai-responses": { pattern: /^[A-Za-z0-9_-]{1,64}$/, text: "letters, digits, _ and -, at most 64" },
  anthropic: { pattern: /^[A-Za-z0-9_-]{1,128}$/, text: "letters, digits, _ and -, at most 128" },
  gemini: {
    pattern: /^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/,
    text: "a leading letter or _, then letters, digits, _ . : and -, at most 64"
  }
}

/** A tool name that cannot be sent to a provider, or that would become indistinguishable from another there. */
export class ToolNameRejected extends TaggedError("ToolNameRejected")<{
  readonly provider: ToolDialect
  readonly tool: string
  /** The other tool whose wire name this one's would collide with, when that is the reason. */
  readonly conflictsWith?: string
  readonly message: string
}> {}

/** The provider's spelling of a neutral name, before collision checks. Dots become underscores where refused. */
export const wireSpelling = (name: string, dialect: ToolDialect): string =>
  dialect === "gemini" ? name : name.replaceAll(".", "_")

/** Why `name` cannot be spelled for `dialect` on its own, or undefined when it can. */
export const wireNameProblem = (name: string, dialect: ToolDialect): string | undefined => {
  if (!NEUTRAL_TOOL_NAME.test(name)) {
    return `tool name ${JSON.stringify(name)} is not a neutral name (letters, digits, _ . and -, 1 to 64)`
  }
  const rule = WIRE_RULE[dialect]
  const wire = wireSpelling(name, dialect)
  return rule.pattern.test(wire)
    ? undefined
    : `${dialect} cannot take tool name ${JSON.stringify(wire)} (${rule.text})`
}

/**
 * The tool names of one tool set on one provider: neutral names to the wire spellings the provider accepts, and back.
 */
export interface ToolNameMap {
  /** The name sent to the provider for the neutral `name`. */
  toWire(name: string): string
  /** The neutral name for a name the provider sent back (unknown names are returned as they are). */
  fromWire(name: string): string
}

/**
 * A reversible mapping between neutral and wire names for one tool set. Throws `ToolNameRejected` when a name
 * breaks the provider's rule or two tools would share a wire name, so no request ever reaches a 400.
 * Names outside the set pass through unchanged: a model may invent a tool, and the worker reports that itself.
 */
export const buildToolNameMap = (names: Iterable<string>, dialect: ToolDialect): ToolNameMap => {
  const toWire = new Map<string, string>()
  const fromWire = new Map<string, string>()
  for (const name of names) {
    const problem = wireNameProblem(name, dialect)
    if (problem !== undefined) throw new ToolNameRejected({ provider: dialect, tool: name, message: problem })
    const wire = wireSpelling(name, dialect)
    const owner = fromWire.get(wire)
    if (owner !== undefined && owner !== name) {
      throw new ToolNameRejected({
        provider: dialect,
        tool: name,
        conflictsWith: owner,
        message: `tools ${JSON.stringify(owner)} and ${JSON.stringify(name)} both become ${JSON.stringify(wire)} on ${dialect}`
      })
    }
    toWire.set(name, wire)
    fromWire.set(wire, name)
  }
  return {
    toWire: (name) => toWire.get(name) ?? name,
    fromWire: (name) => fromWire.get(name) ?? name
  }
}
