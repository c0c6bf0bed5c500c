import { inspect } from "node:util"
import { readFileSync } from "node:fs"
import fc from "fast-check"

/**
 * A provider's genuine in-stream error event (from the recordings in test/fixtures/sse) with an API key put into
 * one of its fields: any leaf, or a new member of any object in it, as raw text or wrapped the ways a provider
 * echoes a credential (in a sentence, inside JSON text, in a URL's query, in an echoed header).
 */

export type ErrorScheme = "openai-chat" | "openai-responses" | "anthropic" | "gemini"

/** The recordings whose streams carry an error event, per wire format. */
export const ERROR_FIXTURES: Readonly<Record<ErrorScheme, ReadonlyArray<string>>> = {
  "openai-chat": ["error-mid-stream", "error-with-usage"],
  "openai-responses": ["error-mid-stream", "error-nested"],
  anthropic: ["error-mid-stream"],
  gemini: ["error-mid-stream"]
}

const fixture = (scheme: ErrorScheme, name: string): string =>
  readFileSync(new URL(`../fixtures/sse/${scheme}/${name}.sse`, import.meta.url), "utf8")

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

interface ErrorEvent {
  readonly blocks: ReadonlyArray<string>
  readonly index: number
  /** Whether the block is an SSE `data:` line (else a bare JSON body, as Gemini ends a broken stream). */
  readonly dataLine: string | undefined
  readonly value: Json
}

const isErrorEvent = (value: unknown): boolean =>
  typeof value === "object" && value !== null && ("error" in value || (value as { type?: unknown }).type === "error")

const errorEventOf = (transcript: string): ErrorEvent => {
  // Separators kept (odd indices): Gemini's recording separates with "\n\r\n".
  const blocks = transcript.split(/(\r?\n\r?\n)/)
  for (let index = 0; index < blocks.length; index += 2) {
    const block = blocks[index] as string
    const dataLine = block.split("\n").find((line) => line.startsWith("data: "))
    try {
      const value = JSON.parse(dataLine === undefined ? block : dataLine.slice("data: ".length)) as Json
      if (isErrorEvent(value)) return { blocks, index, dataLine, value }
    } catch {
      // not this block
    }
  }
  throw new Error("no error event in the recording")
}

type Path = ReadonlyArray<string | number>

/** Every place a value can go: each leaf (replaced), and a new member `leaked` of each object. */
const placesOf = (value: Json, at: Path = []): Array<{ readonly path: Path; readonly add: boolean }> => {
  if (Array.isArray(value)) return value.flatMap((item, i) => placesOf(item as Json, [...at, i]))
  if (typeof value === "object" && value !== null) {
    return [{ path: at, add: true }, ...Object.entries(value).flatMap(([key, item]) => placesOf(item, [...at, key]))]
  }
  return [{ path: at, add: false }]
}

const put = (value: Json, path: Path, add: boolean, leaked: Json): Json => {
  if (path.length === 0) return add ? { ...(value as Record<string, Json>), leaked } : leaked
  const [head, ...rest] = path
  if (Array.isArray(value)) return value.map((item, i) => (i === head ? put(item as Json, rest, add, leaked) : item))
  const record = value as Record<string, Json>
  return { ...record, [head as string]: put(record[head as string] as Json, rest, add, leaked) }
}

/** The ways a provider's text may carry a key. */
export const WRAPS: ReadonlyArray<(key: string) => Json> = [
  (key) => key,
  (key) => `Incorrect API key provided: ${key}. You can find your API key at https://platform.example/account/api-keys.`,
  (key) => JSON.stringify({ error: { api_key: key } }),
  (key) => `GET https://generativelanguage.example/v1beta/models?key=${encodeURIComponent(key)} failed`,
  (key) => ({ headers: { authorization: `Bearer ${key}`, "x-api-key": key } }),
  (key) => ["token", { value: key }]
]

/** One choice of where the key goes. */
export interface Placement {
  readonly scheme: ErrorScheme
  readonly fixture: string
  /** Index into the event's places (taken modulo their number). */
  readonly place: number
  readonly wrap: number
}

export const placementArbitrary = (schemes: ReadonlyArray<ErrorScheme> = ["openai-chat", "openai-responses", "anthropic", "gemini"]): fc.Arbitrary<Placement> =>
  fc
    .constantFrom(...schemes.flatMap((scheme) => ERROR_FIXTURES[scheme].map((name) => [scheme, name] as const)))
    .chain(([scheme, name]) =>
      fc.record({ scheme: fc.constant(scheme), fixture: fc.constant(name), place: fc.nat(200), wrap: fc.nat(WRAPS.length - 1) })
    )

/** The recording with the key placed as `placement` says: SSE text as the provider would send it. */
export const transcriptWithKey = (placement: Placement, key: string): string => {
  const event = errorEventOf(fixture(placement.scheme, placement.fixture))
  const places = placesOf(event.value)
  const { path, add } = places[placement.place % places.length] as { path: Path; add: boolean }
  const changed = put(event.value, path, add, (WRAPS[placement.wrap] as (key: string) => Json)(key))
  const block = event.blocks[event.index] as string
  const replaced =
    event.dataLine === undefined ? `${JSON.stringify(changed, null, 2)}\n` : block.replace(event.dataLine, `data: ${JSON.stringify(changed)}`)
  return [...event.blocks.slice(0, event.index), replaced, ...event.blocks.slice(event.index + 1)].join("")
}

/** A key as providers issue them (`sk-proj-…`, `sk-ant-api03-…`, `AIza…`), with the base64 characters some tokens carry. */
export const keyArbitrary: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom("sk-proj-", "sk-ant-api03-", "AIza", "tok_"),
    fc.stringMatching(/^[A-Za-z0-9_\-+/=]{24,60}$/)
  )
  .map(([prefix, body]) => `${prefix}${body}`)

/**
 * Whether `text` holds the key, or 12 consecutive characters of it, in any spelling it could travel in (raw,
 * JSON-escaped, percent-encoded in either hex case): a clipped key is still a leak.
 */
export const leaks = (text: string, key: string): boolean => {
  const encoded = encodeURIComponent(key)
  const spellings = [key, key.replace(/\//g, "\\/"), encoded, encoded.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())]
  return spellings.some((spelling) => {
    for (let i = 0; i + 12 <= spelling.length; i++) if (text.includes(spelling.slice(i, i + 12))) return true
    return false
  })
}

/** The provider name that speaks each error scheme. */
export const PROVIDER_OF = { "openai-chat": "openai", "openai-responses": "openai-responses", anthropic: "anthropic", gemini: "gemini" } as const

/** Everything a thrown value shows: message, fields, hops, one-line form, stack and Node's inspect output. */
export const surfacesOf = (thrown: unknown): string =>
  [String(thrown), (thrown as Error).message, (thrown as Error).stack ?? "", JSON.stringify(thrown), inspect(thrown, { depth: 10 })].join("\n")
