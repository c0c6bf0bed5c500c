import { readdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { SchemeName } from "../../src/llm/scheme.ts"

/** The recorded provider transcripts under test/fixtures/sse/<scheme>/*.sse, in each provider's genuine wire format. */
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "sse")

/** The recorded transcripts available for a scheme, by file name without `.sse`. */
export const listTranscripts = (scheme: SchemeName): ReadonlyArray<string> => {
  try {
    return readdirSync(join(FIXTURES, scheme))
      .filter((file) => file.endsWith(".sse"))
      .map((file) => file.slice(0, -".sse".length))
      .sort()
  } catch {
    return []
  }
}

export const loadTranscript = (scheme: SchemeName, name: string): string => readFileSync(join(FIXTURES, scheme, `${name}.sse`), "utf8")
