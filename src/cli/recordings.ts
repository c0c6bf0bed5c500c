import { readFileSync } from "node:fs"
import type { SchemeName } from "../llm/scheme.ts"

/**
 * The demo's recorded session, one pair of streams per wire format, shipped inside `src/` so an installed package
 * can replay it: `tool-calls` asks for clock, calculator and read_file; `answer` is the reply after their results.
 */
export type RecordingName = "tool-calls" | "answer"

export const loadRecording = (scheme: SchemeName, name: RecordingName): string =>
  readFileSync(new URL(`./recordings/${scheme}/${name}.sse`, import.meta.url), "utf8")

/** The model each recording came from; the demo's client names it so the request matches the recording. */
export const RECORDED_MODELS: Readonly<Record<SchemeName, string>> = {
  "openai-chat": "gpt-4.1-mini-2025-04-14",
  "openai-responses": "gpt-4.1-mini-2025-04-14",
  anthropic: "claude-sonnet-4-5-20250929",
  gemini: "gemini-2.5-flash"
}
