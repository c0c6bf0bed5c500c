import type { SchemeName } from "../../llm/scheme.ts"

/** A script asks for something a wire format cannot say (Gemini sends arguments only as a JSON object). */
export class ScriptEncodingError extends Error {
  override readonly name = "ScriptEncodingError"

  constructor(
    readonly scheme: SchemeName,
    detail: string
  ) {
    super(`Cannot encode the script for ${scheme}: ${detail}`)
  }
}
