import type { WorkerError } from "../worker/worker-error.ts"
import { redactForDisplay } from "./process-secrets.ts"

/** Error text stays on one line; a provider's full body belongs in logs, not in the chat. */
const MAX_DETAIL = 300

/**
 * The provider's own explanation inside an HTTP error body. OpenAI, Anthropic and Gemini all put it at
 * `error.message` (Gemini sometimes wraps the object in an array); anything else yields nothing.
 */
const providerMessage = (body: string): string | undefined => {
  try {
    const parsed: unknown = JSON.parse(body)
    const root = Array.isArray(parsed) ? (parsed[0] as unknown) : parsed
    const error = typeof root === "object" && root !== null ? (root as { error?: unknown }).error : undefined
    const message = typeof error === "object" && error !== null ? (error as { message?: unknown }).message : undefined
    return typeof message === "string" && message.trim() !== "" ? message : undefined
  } catch {
    return undefined
  }
}

/**
 * Redacted before it is cut: a cut through `user:secret@` would leave part of the secret with no `@` to recognise it
 * by. Control characters are left for the terminal to escape; only whitespace runs are folded here.
 */
const oneLine = (text: string): string => {
  const flat = redactForDisplay(text).replace(/\s+/g, " ").trim()
  return flat.length <= MAX_DETAIL ? flat : `${flat.slice(0, MAX_DETAIL)}…`
}

/** One line for a failed turn: the worker's message, plus the provider's reason when an HTTP error carried one. */
export const failureText = (error: WorkerError): string => {
  if (error._tag === "ClientFailed" && error.error._tag === "LlmHttpError") {
    const reason = providerMessage(error.error.body)
    if (reason !== undefined) return oneLine(`${error.message}: ${reason}`)
  }
  return oneLine(error.message)
}
