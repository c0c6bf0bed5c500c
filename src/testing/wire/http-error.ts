import type { SchemeName } from "../../llm/scheme.ts"
import type { ScriptedHttpError } from "../script.ts"
import type { EncodedHttpError } from "./frames.ts"

/** The error type each provider names for a status, when the script names none. */
const openAiType = (status: number): string =>
  status === 429 ? "rate_limit_exceeded" : status >= 500 ? "server_error" : status === 401 ? "invalid_api_key" : "invalid_request_error"

const anthropicType = (status: number): string =>
  status === 429
    ? "rate_limit_error"
    : status === 529
      ? "overloaded_error"
      : status >= 500
        ? "api_error"
        : status === 401
          ? "authentication_error"
          : status === 403
            ? "permission_error"
            : status === 404
              ? "not_found_error"
              : "invalid_request_error"

const googleStatus = (status: number): string =>
  status === 429
    ? "RESOURCE_EXHAUSTED"
    : status === 503
      ? "UNAVAILABLE"
      : status >= 500
        ? "INTERNAL"
        : status === 401
          ? "UNAUTHENTICATED"
          : status === 403
            ? "PERMISSION_DENIED"
            : status === 404
              ? "NOT_FOUND"
              : "INVALID_ARGUMENT"

/** The JSON error body each provider answers a refused request with. */
const errorBody = (scheme: SchemeName, step: ScriptedHttpError): unknown => {
  switch (scheme) {
    case "openai-chat":
    case "openai-responses": {
      const type = step.code ?? openAiType(step.status)
      return { error: { message: step.message, type, param: null, code: type } }
    }
    case "anthropic":
      return { type: "error", error: { type: step.code ?? anthropicType(step.status), message: step.message } }
    case "gemini":
      return { error: { code: step.status, message: step.message, status: step.code ?? googleStatus(step.status) } }
  }
}

export const encodeHttpError = (scheme: SchemeName, step: ScriptedHttpError): EncodedHttpError => ({
  kind: "status",
  status: step.status,
  headers: {
    "content-type": "application/json",
    ...(step.retryAfterSeconds === undefined ? {} : { "retry-after": String(step.retryAfterSeconds) }),
    ...step.headers
  },
  body: step.body ?? JSON.stringify(errorBody(scheme, step))
})

/**
 * The status a provider refuses a non-streamed request with, for the error a streamed reply would carry in its
 * body: its type or status name says which (rate limits 429, overload 529 or 503, bad requests 400…), else 500.
 */
export const errorStatus = (code: string): number => {
  const known: Readonly<Record<string, number>> = {
    rate_limit_error: 429,
    rate_limit_exceeded: 429,
    RESOURCE_EXHAUSTED: 429,
    overloaded_error: 529,
    UNAVAILABLE: 503,
    server_error: 500,
    api_error: 500,
    INTERNAL: 500,
    invalid_request_error: 400,
    INVALID_ARGUMENT: 400,
    authentication_error: 401,
    invalid_api_key: 401,
    UNAUTHENTICATED: 401,
    permission_error: 403,
    PERMISSION_DENIED: 403,
    not_found_error: 404,
    NOT_FOUND: 404
  }
  return known[code] ?? 500
}
