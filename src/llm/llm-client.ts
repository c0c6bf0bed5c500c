import type { LlmClient } from "./client.ts"
import { defaultResponseLimits } from "./limits.ts"
import type { ResponseLimits } from "./limits.ts"
import { LlmConfigError } from "./llm-error.ts"
import type { Provider } from "./providers/provider.ts"
import { type ProviderName, providerNames, providers } from "./providers/registry.ts"
import { checkBaseUrl, shownBaseUrl } from "./base-url.ts"
import { defaultRetryPolicy } from "./transport/retry-policy.ts"
import type { RetryPolicy } from "./transport/retry-policy.ts"
import { streamSse } from "./transport/sse-transport.ts"
import type { TransportOptions } from "./transport/sse-transport.ts"
import { defaultTimeouts } from "./transport/timeouts.ts"
import type { Timeouts } from "./transport/timeouts.ts"

/**
 * Options of `createLlmClient`. Only `provider` and `model` are required; keys and base URLs default to the provider's environment variables.
 */
export interface LlmClientOptions {
  /**
   * A built-in provider's name (`"openai"`, `"anthropic"`, `"gemini"`, `"ollama"`, …; see `providerNames`) or a
   * `Provider` value: a preset such as `ollama`, or your own `openAiCompatible({ … })`. Editors complete the
   * names; any other string compiles (a name read from a flag or a table) and an unknown one throws
   * `LlmConfigError` here, listing the known names. `isProviderName` narrows a string ahead of time.
   */
  // `string & {}` keeps the literal names visible to completion: a bare `string` would absorb them.
  readonly provider: ProviderName | (string & {}) | Provider
  readonly model: string
  /** Overrides the provider's environment variables. */
  readonly apiKey?: string
  /**
   * Overrides the provider's base-URL variable and default. An absolute `http:` or `https:` URL without user
   * name or password, checked here: `"localhost:8080"` throws `LlmConfigError` suggesting `http://localhost:8080`.
   */
  readonly baseUrl?: string
  readonly retry?: Partial<RetryPolicy>
  /** Deadlines; `totalMs` (off by default) bounds the whole call. See `defaultTimeouts`. */
  readonly timeouts?: Partial<Timeouts>
  /**
   * Size bounds of one response (text, reasoning, one call's arguments, one SSE event); past one the call
   * fails with `LlmLimitExceeded`. See `defaultResponseLimits`.
   */
  readonly limits?: Partial<ResponseLimits>
  /** Defaults to the global `fetch`. */
  readonly fetch?: typeof globalThis.fetch
  /** Where keys and base URLs are looked up; defaults to `process.env` where there is one (Node, Bun, Deno), else `{}`. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Extra headers on every request (organisation ids, OpenRouter's `HTTP-Referer`, …); auth headers win. */
  readonly headers?: Readonly<Record<string, string>>
}

/** Error bodies are for people and logs; 64 KiB holds any JSON error a provider sends. */
const MAX_ERROR_BODY_BYTES = 64 * 1024

const resolveProvider = (provider: string | Provider): Provider => {
  if (typeof provider !== "string") return provider
  const found = providers.get(provider)
  if (found === undefined) {
    throw new LlmConfigError({ message: `Unknown provider "${provider}"; known providers: ${providerNames.join(", ")}` })
  }
  return found
}

/**
 * The user's extra headers, then the provider's auth headers, merged by name case-insensitively so an
 * `Authorization` of the user's can never travel beside the provider's `authorization`: auth wins.
 */
const mergeHeaders = (extra: Readonly<Record<string, string>>, auth: Readonly<Record<string, string>>): Record<string, string> => {
  const merged = new Headers(extra)
  for (const [name, value] of Object.entries(auth)) merged.set(name, value)
  return Object.fromEntries(merged)
}

/** `process.env` without assuming a `process`: browsers and edge runtimes have none. */
const processEnv = (): Readonly<Record<string, string | undefined>> =>
  (globalThis as { readonly process?: { readonly env?: Readonly<Record<string, string | undefined>> } }).process?.env ?? {}

const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === "" ? undefined : value.trim()

/**
 * Creates a client for one provider and model. Configuration is resolved here, once: an unknown provider, a
 * missing model, a missing key for a hosted provider or an unusable base URL throws `LlmConfigError` now rather
 * than at the first request, and later changes to the environment do not affect an existing client.
 *
 * @example
 * ```ts
 * const client = createLlmClient({ provider: "anthropic", model: "claude-sonnet-4-5" }) // reads ANTHROPIC_API_KEY
 * const local = createLlmClient({ provider: "ollama", model: "qwen3", timeouts: { idleMs: 30_000 } })
 * for await (const event of client.stream({ model: client.model, items: [Item.userText("Hi")], tools: [], config: {} })) {
 *   if (event.type === "block_delta" && event.delta.kind === "text") process.stdout.write(event.delta.text)
 * }
 * ```
 */
export const createLlmClient = (options: LlmClientOptions): LlmClient => {
  const provider = resolveProvider(options.provider)
  const env = options.env ?? processEnv()
  const model = options.model.trim()
  if (model === "") throw new LlmConfigError({ message: `No model given for provider "${provider.name}"` })

  const apiKey = nonEmpty(options.apiKey) ?? provider.apiKeyEnv.map((name) => nonEmpty(env[name])).find((key) => key !== undefined)
  if (apiKey === undefined && provider.requiresApiKey) {
    const where = provider.apiKeyEnv.length > 0 ? `set ${provider.apiKeyEnv.join(" or ")} or pass apiKey` : "pass apiKey"
    throw new LlmConfigError({ message: `No API key for provider "${provider.name}": ${where}` })
  }

  const configuredBase =
    nonEmpty(options.baseUrl) ?? (provider.baseUrlEnv === undefined ? undefined : nonEmpty(env[provider.baseUrlEnv])) ?? provider.defaultBaseUrl
  const baseUrl = checkBaseUrl(configuredBase, provider.name).replace(/\/+$/, "")
  let url: string
  try {
    url = new URL(provider.endpoint(baseUrl, model)).href
  } catch {
    throw new LlmConfigError({ option: "baseUrl", message: `Base URL ${shownBaseUrl(configuredBase)} for provider "${provider.name}" gives no valid endpoint URL` })
  }

  const limits = { ...defaultResponseLimits, ...options.limits }
  for (const [name, value] of Object.entries(limits)) {
    if (typeof value !== "number" || Number.isNaN(value) || value <= 0) {
      throw new LlmConfigError({ message: `limits.${name} must be a positive number (Infinity for no bound), got ${String(value)}` })
    }
  }

  const headers = mergeHeaders(options.headers ?? {}, apiKey === undefined ? {} : provider.authHeaders(apiKey))
  const transport: TransportOptions = {
    retry: { ...defaultRetryPolicy, ...options.retry },
    timeouts: { ...defaultTimeouts, ...options.timeouts },
    fetch: options.fetch ?? globalThis.fetch,
    maxErrorBodyBytes: MAX_ERROR_BODY_BYTES,
    limits,
    provider: provider.name
  }
  const scheme = provider.scheme

  return {
    scheme: scheme.name,
    ...(scheme.toolLintTarget === undefined ? {} : { toolLintTarget: scheme.toolLintTarget }),
    provider: provider.name,
    model,
    encodeRequest: (request) => scheme.encodeRequest(request),
    validate: (request) => scheme.validate(request),
    stream: (request, streamOptions) =>
      streamSse(
        { url, headers, body: streamOptions?.body ?? scheme.encodeRequest(request), decoder: (decoderOptions) => scheme.decoder(request, decoderOptions) },
        transport,
        streamOptions?.signal
      )
  }
}
