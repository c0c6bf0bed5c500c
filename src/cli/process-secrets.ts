import { environmentSecrets } from "../redact/environment.ts"
import { SecretRedactor } from "../redact/secrets.ts"

/** Built on first use: the environment is the CLI's own and does not change while it runs. */
let secrets: SecretRedactor | undefined

/**
 * `text` with this process's credentials hidden: every key or token of the environment (`OPENAI_API_KEY`…) in any
 * spelling, and URL credentials by their shape. Applied to every whole text the CLI prints, before any clipping
 * (a clipped key would no longer be recognised).
 */
export const redactForDisplay = (text: string): string => {
  secrets ??= new SecretRedactor(environmentSecrets(process.env))
  return secrets.redact(text)
}
