import { stringEnd, stringLiteral } from "./json-shapes.ts"
import type { GeminiStreamChunk } from "./gemini-wire.ts"

const HEAD = '{"candidates":[{"content":{"parts":[{"text":'
const CANDIDATES_END = '}],"role":"model"},"index":0}]'

/**
 * A chunk whose one candidate carries one text part, recognised in the compact form Gemini sends it in
 * (`{"candidates":[{"content":{"parts":[{"text":"…"}],"role":"model"},"index":0}],"usageMetadata":…}`), as
 * `JSON.parse` would give it; undefined for anything else, which is then parsed in full (see json-shapes.ts).
 * The fields after the candidates (usage, model version, response id) are parsed as one object of their own:
 * `JSON.parse` lets a repeated key's last value win in the first one's place, and so does the spread below.
 */
export const geminiTextShape = (data: string): GeminiStreamChunk | undefined => {
  if (!data.startsWith(HEAD)) return undefined
  const end = stringEnd(data, HEAD.length)
  if (end === undefined || !data.startsWith(CANDIDATES_END, end)) return undefined
  const text = stringLiteral(data, HEAD.length, end)
  if (text === undefined) return undefined
  const candidates = [{ content: { parts: [{ text }], role: "model" }, index: 0 }]
  const after = end + CANDIDATES_END.length
  if (after === data.length - 1 && data.charCodeAt(after) === 125) return { candidates } as GeminiStreamChunk
  // The rest must be members (`,"key":…}`): `{` + them is then exactly the object they make.
  if (data.charCodeAt(after) !== 44 || data.charCodeAt(after + 1) !== 34) return undefined
  let rest: unknown
  try {
    rest = JSON.parse(`{${data.slice(after + 1)}`)
  } catch {
    return undefined
  }
  return { candidates, ...(rest as object) } as GeminiStreamChunk
}
