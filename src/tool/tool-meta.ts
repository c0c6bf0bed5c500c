import { Equal, Hash } from "effect"
import { TaggedError } from "../error/tagged-error.ts"
import { canonicalSchema } from "../schema/canonical-json.ts"
import { NEUTRAL_TOOL_NAME } from "../schema/tool-names.ts"
import type { JsonSchema, JsonValue } from "../schema/json-schema.ts"
import { checkOutputLimit } from "./output-limit.ts"

/** The widest tool-name rule any provider accepts; narrower provider rules are applied per provider. */
export const TOOL_NAME_PATTERN = NEUTRAL_TOOL_NAME

/** A tool name that no provider could accept. */
export class InvalidToolName extends TaggedError("InvalidToolName")<{
  readonly toolName: string
  readonly message: string
}> {}

const EMPTY_OBJECT_SCHEMA: JsonSchema = canonicalSchema({ type: "object", properties: {}, additionalProperties: false })

const jsonEquals = (a: JsonValue, b: JsonValue): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const bb = b as ReadonlyArray<JsonValue>
    return a.length === bb.length && a.every((v, i) => jsonEquals(v, bb[i] as JsonValue))
  }
  const ao = a as { readonly [k: string]: JsonValue }
  const bo = b as { readonly [k: string]: JsonValue }
  const ak = Object.keys(ao)
  if (ak.length !== Object.keys(bo).length) return false
  return ak.every((k) => Object.hasOwn(bo, k) && jsonEquals(ao[k] as JsonValue, bo[k] as JsonValue))
}

/**
 * Immutable metadata of a tool: what the model is told about it. Fixed at registration; hooks read it, nothing
 * writes it. Every "setter" returns a new value, and values compare structurally (`Equal.equals` or `equals`).
 *
 * @example
 * const meta = ToolMeta.make("get_weather")
 *   .description("Current weather for a city")
 *   .inputSchema({ type: "object", properties: { city: { type: "string" } }, required: ["city"] })
 */
export class ToolMeta implements Equal.Equal {
  readonly name: string
  readonly descriptionText: string
  readonly schema: JsonSchema
  /**
   * This tool's own cap on the UTF-8 bytes of one call's output or error text sent to the model (marker
   * included); `undefined` means the caller's default (the Worker's `maxToolOutputBytes`, else 100 KiB).
   */
  readonly maxOutputBytes: number | undefined

  private constructor(name: string, description: string, schema: JsonSchema, maxOutputBytes: number | undefined) {
    this.name = name
    this.descriptionText = description
    this.schema = schema
    this.maxOutputBytes = maxOutputBytes
    Object.freeze(this)
  }

  /**
   * Starts a meta with a validated name, an empty description and a schema accepting only `{}`.
   * @throws InvalidToolName when the name breaks `[A-Za-z0-9_.-]{1,64}`.
   */
  static make(name: string): ToolMeta {
    if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name)) {
      throw new InvalidToolName({
        toolName: String(name),
        message: `invalid tool name ${JSON.stringify(name)}: expected 1-64 characters from [A-Za-z0-9_.-]`
      })
    }
    return new ToolMeta(name, "", EMPTY_OBJECT_SCHEMA, undefined)
  }

  /** A copy with this description. */
  description(text: string): ToolMeta {
    return new ToolMeta(this.name, text, this.schema, this.maxOutputBytes)
  }

  /**
   * A copy with this input schema: deep-copied with its keys in canonical order (the author's order of
   * `properties` kept) and frozen, so later edits to the argument cannot leak in and every provider fragment
   * built from it serialises without reordering.
   */
  inputSchema(schema: JsonSchema): ToolMeta {
    return new ToolMeta(this.name, this.descriptionText, canonicalSchema(schema), this.maxOutputBytes)
  }

  /**
   * A copy with this output cap in UTF-8 bytes (at least 256; `Infinity` for none). Longer output or error text
   * is cut on a character boundary and ends with a marker saying how many bytes were dropped.
   * @throws RangeError for anything else.
   */
  outputLimit(maxBytes: number): ToolMeta {
    return new ToolMeta(this.name, this.descriptionText, this.schema, checkOutputLimit(maxBytes, "outputLimit"))
  }

  /** Structural equality: same name, description, output limit and schema (key order ignored). */
  equals(that: ToolMeta): boolean {
    return (
      this.name === that.name &&
      this.descriptionText === that.descriptionText &&
      this.maxOutputBytes === that.maxOutputBytes &&
      jsonEquals(this.schema, that.schema)
    )
  }

  /** Effect's `Equal`: the same as `equals`. */
  [Equal.symbol](that: Equal.Equal): boolean {
    return that instanceof ToolMeta && this.equals(that)
  }

  /** Effect's `Hash`, consistent with `equals`. */
  [Hash.symbol](): number {
    // The schema is left out: equal schemas may differ in key order, and equal values must hash alike.
    return Hash.string(`${this.name}\u0000${this.descriptionText}`)
  }

  /** The provider-neutral definition: name, description and input schema. */
  toJSON(): { readonly name: string; readonly description: string; readonly inputSchema: JsonSchema } {
    return { name: this.name, description: this.descriptionText, inputSchema: this.schema }
  }
}
