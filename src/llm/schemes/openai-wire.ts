import type { ConfigWarning, SchemeName } from "../scheme.ts"

/**
 * Small pieces both OpenAI schemes share: how an error tool result is marked, how a warning is built, how an SSE
 * data line is read.
 */

/**
 * OpenAI has no is-error flag on tool results (Chat `role:"tool"` messages and Responses `function_call_output`
 * items carry only text), so an error result is marked by this prefix on its output. Models read it reliably and
 * the marking is the same in both schemes, so a history moved between them keeps its meaning.
 */
export const TOOL_ERROR_PREFIX = "[tool error] "

export const toolOutputText = (output: string, isError: boolean): string =>
  isError ? TOOL_ERROR_PREFIX + output : output

export const configWarning = (scheme: SchemeName, setting: string, message: string): ConfigWarning => ({
  _tag: "ConfigWarning",
  scheme,
  setting,
  message
})

export type JsonRecord = { readonly [key: string]: unknown }

export const isRecord = (value: unknown): value is JsonRecord =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Parses one SSE data payload; `undefined` when it is not a JSON object (the caller reports it). */
export const parseDataObject = (data: string): JsonRecord | undefined => {
  try {
    const value: unknown = JSON.parse(data)
    return isRecord(value) ? value : undefined
  } catch {
    return undefined
  }
}

/**
 * A field's value when it is a string / a finite number. The decoders' per-chunk paths read the field by name
 * at the call site and pass its value here: a helper that also does the keyed read (`stringField`, …) is one
 * megamorphic lookup per field on every chunk (decision 0088).
 */
export const asString = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)
export const asFiniteNumber = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? value : undefined

export const stringField = (record: JsonRecord, key: string): string | undefined => asString(record[key])

/** An error `code`, which compatible servers send as a string (`"rate_limit_exceeded"`) or a number (`502`). */
export const codeField = (record: JsonRecord, key: string): string | undefined => {
  const value = record[key]
  return typeof value === "string" ? value : typeof value === "number" && Number.isFinite(value) ? String(value) : undefined
}

export const numberField = (record: JsonRecord, key: string): number | undefined => asFiniteNumber(record[key])

export const recordField = (record: JsonRecord, key: string): JsonRecord | undefined => {
  const value = record[key]
  return isRecord(value) ? value : undefined
}
