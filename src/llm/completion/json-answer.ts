import { jsonTextDepth } from "../../schema/json-depth.ts"
import { DEFAULT_MAX_JSON_DEPTH } from "../../schema/json-depth.ts"

/** What reading a model's answer as JSON gave. */
export type JsonAnswer =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly problem: string }

/** Bounds for `readJsonAnswer`. */
export interface JsonAnswerOptions {
  /** Deepest nesting accepted (default 64, `DEFAULT_MAX_JSON_DEPTH`); deeper is refused before parsing. */
  readonly maxDepth?: number
}

/**
 * Reasoning some models (and OpenAI-compatible servers) print inline before the answer. Only leading blocks are
 * removed — the same tag inside the answer's JSON strings is data. An unclosed block runs to the end of the text:
 * nothing after it is the answer.
 */
const LEADING_REASONING = /^\s*<(think|thinking|reasoning)>[\s\S]*?(?:<\/\1>|$)/i

const withoutReasoning = (text: string): string => {
  let rest = text
  for (let blocks = 0; blocks < 16; blocks++) {
    const next = rest.replace(LEADING_REASONING, "")
    if (next === rest) break
    rest = next
  }
  return rest
}

/** Openings tried before giving up: each is one linear scan, so hostile text costs at most this many scans. */
const MAX_CANDIDATES = 64

/** The end (exclusive) of the balanced value opening at `start`, or -1; string-aware, iterative. */
const balancedEnd = (text: string, start: number): number => {
  const closers: Array<string> = []
  let inString = false
  for (let i = start; i < text.length; i++) {
    const c = text[i] as string
    if (inString) {
      if (c === "\\") i++
      else if (c === '"') inString = false
      continue
    }
    if (c === '"') inString = true
    else if (c === "{") closers.push("}")
    else if (c === "[") closers.push("]")
    else if (c === "}" || c === "]") {
      if (closers.pop() !== c) return -1
      if (closers.length === 0) return i + 1
    }
  }
  return -1
}

const parse = (text: string, maxDepth: number): JsonAnswer | undefined => {
  if (jsonTextDepth(text, maxDepth) > maxDepth) return { ok: false, problem: `the answer's JSON is nested deeper than ${maxDepth} levels` }
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch {
    return undefined
  }
}

/**
 * The model's answer read as JSON: reasoning blocks (`<think>…</think>` and the like) are dropped, then the
 * whole remaining text is tried, then the first balanced `{…}` / `[…]` that parses — wherever it is, inside a
 * code fence or after a sentence of prose. A bare `null` is not an answer. Bounded: a depth check before each
 * parse and at most 64 openings tried.
 */
export const readJsonAnswer = (text: string, options?: JsonAnswerOptions): JsonAnswer => {
  const maxDepth = options?.maxDepth ?? DEFAULT_MAX_JSON_DEPTH
  const answer = withoutReasoning(text).trim()
  if (answer === "") return { ok: false, problem: "the answer is empty" }
  const whole = parse(answer, maxDepth)
  if (whole !== undefined) {
    if (!whole.ok) return whole
    if (whole.value === null) return { ok: false, problem: "the answer is a bare null" }
    return whole
  }
  let tried = 0
  for (let at = 0; at < answer.length && tried < MAX_CANDIDATES; at++) {
    const c = answer[at]
    if (c !== "{" && c !== "[") continue
    tried++
    const end = balancedEnd(answer, at)
    if (end === -1) continue
    const found = parse(answer.slice(at, end), maxDepth)
    if (found !== undefined) return found
  }
  return { ok: false, problem: "no JSON value found in the answer" }
}
