import { ConfigReader, join } from "./config-reader.ts"
import { PluginLlmConfigError } from "./errors.ts"

/** A route: a provider name (built in, or one of `llm.providers`) and a model id. */
export interface RouteSpec {
  readonly provider: string
  readonly model: string
}

/** `plugins.entries.<id>.llm`: what the operator lets one plugin choose. Everything absent is refused. */
export interface PluginGrants {
  readonly allowProviderOverride: boolean
  /** Absent: any provider once the flag is on. `["*"]`: any. `[]`: none. */
  readonly allowedProviders?: ReadonlyArray<string>
  readonly allowModelOverride: boolean
  readonly allowedModels?: ReadonlyArray<string>
  readonly allowAgentIdOverride: boolean
  readonly allowProfileOverride: boolean
  readonly allowTaskOverride: boolean
  /** Calls this plugin may make while the host runs; absent: `llm.budgets.max_calls`, else unbounded. */
  readonly maxCalls?: number
  /** Calls of this plugin in flight at once; absent: `llm.budgets.max_concurrent`, else 4. */
  readonly maxConcurrent?: number
}

/** `plugins.entries.<id>`: one plugin as the operator configured it. */
export interface PluginEntry {
  /** Whether the host loads its `module` (default true); a disabled entry's module is not loaded. */
  readonly enabled: boolean
  /** An in-process plugin module the host loads (path relative to the config file). */
  readonly module?: string
  /** What the plugin may choose; closed (nothing granted) when the entry has no `llm` section. */
  readonly llm: PluginGrants
}

/** `auxiliary.<task>`: the operator's route and deadline for a task (`auto` or absent: not overridden). */
export interface AuxiliaryTaskConfig {
  readonly provider?: string
  readonly model?: string
  readonly timeoutMs?: number
}

/** `llm.providers.<name>`: a named endpoint. `type` is the built-in provider it speaks (default: the name). */
export interface ProviderEndpoint {
  readonly type: string
  readonly baseUrl?: string
  /** The environment variable holding its key (the key itself never appears in config). */
  readonly apiKeyEnv?: string
  /** Or a file holding only the key (relative to the config file's folder), read when the route is first used. */
  readonly apiKeyFile?: string
}

/** `llm.profiles.<name>`: a stored credential: which variable holds it, and for which provider only. */
export interface CredentialProfile {
  /** Exactly one of the two: the variable, or a file holding only the key. */
  readonly apiKeyEnv?: string
  readonly apiKeyFile?: string
  readonly provider?: string
}

/** `llm.prices[]`: the operator's own prices in USD per million tokens; these win over the maintained table. */
export interface PriceEntry {
  readonly provider?: string
  readonly model: string
  readonly inputPerMTok: number
  readonly outputPerMTok: number
  readonly cacheReadPerMTok?: number
  readonly cacheWritePerMTok?: number
}

/** The `llm` section, decoded with its defaults: timeouts, retries, endpoints, fallback, vision, prices, budgets. */
export interface LlmSection {
  /** Global default deadline of one call (`llm.timeout`, seconds); 60 s when absent. */
  readonly timeoutMs: number
  /** Retries per route before the next hop (`llm.max_retries`); 1 when absent. */
  readonly maxRetries: number
  /** `llm.providers`: named endpoints routes may use besides the built-in providers. */
  readonly providers: Readonly<Record<string, ProviderEndpoint>>
  /** `llm.profiles`: stored credentials a plugin may pick with `profile` (when granted). */
  readonly profiles: Readonly<Record<string, CredentialProfile>>
  /** `llm.fallback`: routes tried in order when a route fails in a way another may not (429, 5xx, connection, provider error, no credential). */
  readonly fallback: ReadonlyArray<RouteSpec>
  /** `llm.vision`: where a call with images goes when its route's model cannot take images. */
  readonly vision?: RouteSpec
  /** Models that cannot take images (exact ids, or a prefix ending in `*`); added to the built-in list. */
  readonly textOnlyModels: ReadonlyArray<string>
  /** Largest image of a call, in bytes, after base64 decoding (`llm.max_image_bytes`); 5 MiB when absent. */
  readonly maxImageBytes: number
  /** `llm.prices`: the operator's own prices, used before the maintained table. */
  readonly prices: ReadonlyArray<PriceEntry>
  /** `genai-prices` (default): the maintained table from `@pydantic/genai-prices`; `none`: only `prices`. */
  readonly priceTable: "genai-prices" | "none"
  /** Calls each plugin may make while the host runs (`llm.budgets.max_calls`); absent: unbounded. */
  readonly defaultMaxCalls?: number
  /** Calls of each plugin in flight at once (`llm.budgets.max_concurrent`); 4 when absent. */
  readonly defaultMaxConcurrent: number
}

/** The three sections the host hands over undecoded, decoded. */
export interface PluginLlmConfig {
  readonly plugins: Readonly<Record<string, PluginEntry>>
  readonly auxiliary: Readonly<Record<string, AuxiliaryTaskConfig>>
  readonly llm: LlmSection
}

/** A call's deadline when neither the call, its task nor `llm.timeout` sets one, in milliseconds (60 s). */
export const DEFAULT_TIMEOUT_MS = 60_000
/** Deadlines in seconds are at most one day (past 2^31 ms a timer would fire at once). */
export const MAX_TIMEOUT_SECONDS = 86_400
/** Largest image of a call when `llm.max_image_bytes` is not set, in bytes (5 MiB). */
export const DEFAULT_MAX_IMAGE_BYTES = 5 * 1024 * 1024
/** Calls of one plugin in flight at once when neither its grants nor `llm.budgets.max_concurrent` say (4). */
export const DEFAULT_MAX_CONCURRENT = 4
/** Retries of one route before the next fallback hop when `llm.max_retries` is not set (1). */
export const DEFAULT_MAX_RETRIES = 1

const CLOSED: PluginGrants = {
  allowProviderOverride: false,
  allowModelOverride: false,
  allowAgentIdOverride: false,
  allowProfileOverride: false,
  allowTaskOverride: false
}

const GRANT_KEYS = [
  "allow_provider_override", "allowed_providers", "allow_model_override", "allowed_models",
  "allow_agent_id_override", "allow_profile_override", "allow_task_override", "max_calls", "max_concurrent"
]

const grants = (r: ConfigReader, value: unknown, path: string): PluginGrants => {
  const g = r.record(value, path, GRANT_KEYS)
  if (g === undefined) return CLOSED
  const allowedProviders = r.stringList(g["allowed_providers"], join(path, "allowed_providers"))
  const allowedModels = r.stringList(g["allowed_models"], join(path, "allowed_models"))
  const maxCalls = r.positive(g["max_calls"], join(path, "max_calls"), true)
  const maxConcurrent = r.positive(g["max_concurrent"], join(path, "max_concurrent"), true)
  return {
    allowProviderOverride: r.boolean(g["allow_provider_override"], join(path, "allow_provider_override")) ?? false,
    ...(allowedProviders === undefined ? {} : { allowedProviders }),
    allowModelOverride: r.boolean(g["allow_model_override"], join(path, "allow_model_override")) ?? false,
    ...(allowedModels === undefined ? {} : { allowedModels }),
    allowAgentIdOverride: r.boolean(g["allow_agent_id_override"], join(path, "allow_agent_id_override")) ?? false,
    allowProfileOverride: r.boolean(g["allow_profile_override"], join(path, "allow_profile_override")) ?? false,
    allowTaskOverride: r.boolean(g["allow_task_override"], join(path, "allow_task_override")) ?? false,
    ...(maxCalls === undefined ? {} : { maxCalls }),
    ...(maxConcurrent === undefined ? {} : { maxConcurrent })
  }
}

const route = (r: ConfigReader, value: unknown, path: string): RouteSpec | undefined => {
  const spec = r.record(value, path, ["provider", "model"])
  if (spec === undefined) return undefined
  const provider = r.string(spec["provider"], join(path, "provider"))
  const model = r.string(spec["model"], join(path, "model"))
  if (provider === undefined && spec["provider"] === undefined) r.problem(join(path, "provider"), "is required")
  if (model === undefined && spec["model"] === undefined) r.problem(join(path, "model"), "is required")
  return provider === undefined || model === undefined ? undefined : { provider, model }
}

const entries = <T>(r: ConfigReader, value: unknown, path: string, each: (value: unknown, path: string) => T): Record<string, T> => {
  const record = r.record(value, path)
  const out: Record<string, T> = Object.create(null) as Record<string, T>
  if (record === undefined) return out
  for (const [key, member] of Object.entries(record)) out[key] = each(member, join(path, key))
  return out
}

const auto = (value: string | undefined): string | undefined => (value === "auto" ? undefined : value)

/**
 * Decodes the operator's `plugins`, `auxiliary` and `llm` sections (as the host's YAML parser left them). Every
 * problem is collected and thrown together as `PluginLlmConfigError`, each with its path: a wrong type, an
 * unknown key, `"false"` where a boolean belongs, an allowlist written as a string. Absent sections are the
 * closed default: no plugin may override anything.
 */
export const decodePluginLlmConfig = (sections: { readonly plugins?: unknown; readonly auxiliary?: unknown; readonly llm?: unknown }): PluginLlmConfig => {
  const r = new ConfigReader()
  const pluginsSection = r.record(sections.plugins, "plugins", ["entries"])
  const plugins = entries(r, pluginsSection?.["entries"], "plugins.entries", (value, path): PluginEntry => {
    const entry = r.record(value, path, ["enabled", "module", "llm"])
    const module = r.string(entry?.["module"], join(path, "module"))
    return {
      enabled: r.boolean(entry?.["enabled"], join(path, "enabled")) ?? true,
      ...(module === undefined ? {} : { module }),
      llm: grants(r, entry?.["llm"], join(path, "llm"))
    }
  })
  const auxiliary = entries(r, sections.auxiliary, "auxiliary", (value, path): AuxiliaryTaskConfig => {
    const task = r.record(value, path, ["provider", "model", "timeout"])
    const provider = auto(r.string(task?.["provider"], join(path, "provider")))
    const model = auto(r.string(task?.["model"], join(path, "model")))
    const timeout = r.positive(task?.["timeout"], join(path, "timeout"), false, MAX_TIMEOUT_SECONDS)
    return {
      ...(provider === undefined ? {} : { provider }),
      ...(model === undefined ? {} : { model }),
      ...(timeout === undefined ? {} : { timeoutMs: timeout * 1000 })
    }
  })
  const llm = r.record(sections.llm, "llm", [
    "timeout", "max_retries", "providers", "profiles", "fallback", "vision", "text_only_models", "max_image_bytes", "prices", "price_table", "budgets"
  ])
  const providers = entries(r, llm?.["providers"], "llm.providers", (value, path): ProviderEndpoint => {
    const p = r.record(value, path, ["type", "base_url", "api_key_env", "api_key_file"])
    const baseUrl = r.string(p?.["base_url"], join(path, "base_url"))
    const apiKeyEnv = r.string(p?.["api_key_env"], join(path, "api_key_env"))
    const apiKeyFile = r.string(p?.["api_key_file"], join(path, "api_key_file"))
    if (apiKeyEnv !== undefined && apiKeyFile !== undefined) r.problem(path, "give api_key_env or api_key_file, not both")
    const type = r.string(p?.["type"], join(path, "type")) ?? path.slice("llm.providers.".length)
    return {
      type,
      ...(baseUrl === undefined ? {} : { baseUrl }),
      ...(apiKeyEnv === undefined ? {} : { apiKeyEnv }),
      ...(apiKeyFile === undefined ? {} : { apiKeyFile })
    }
  })
  const profiles = entries(r, llm?.["profiles"], "llm.profiles", (value, path): CredentialProfile => {
    const p = r.record(value, path, ["api_key_env", "api_key_file", "provider"])
    const apiKeyEnv = r.string(p?.["api_key_env"], join(path, "api_key_env"))
    const apiKeyFile = r.string(p?.["api_key_file"], join(path, "api_key_file"))
    if (p !== undefined && (p["api_key_env"] === undefined) === (p["api_key_file"] === undefined)) r.problem(path, "needs exactly one of api_key_env, api_key_file")
    const provider = r.string(p?.["provider"], join(path, "provider"))
    return {
      ...(apiKeyEnv === undefined ? {} : { apiKeyEnv }),
      ...(apiKeyFile === undefined ? {} : { apiKeyFile }),
      ...(provider === undefined ? {} : { provider })
    }
  })
  const fallback = (r.list(llm?.["fallback"], "llm.fallback") ?? []).flatMap((value, i) => route(r, value, `llm.fallback[${i}]`) ?? [])
  const vision = route(r, llm?.["vision"], "llm.vision")
  const prices = (r.list(llm?.["prices"], "llm.prices") ?? []).flatMap((value, i): Array<PriceEntry> => {
    const path = `llm.prices[${i}]`
    const p = r.record(value, path, ["provider", "model", "input_per_mtok", "output_per_mtok", "cache_read_per_mtok", "cache_write_per_mtok"])
    if (p === undefined) return []
    const model = r.string(p["model"], join(path, "model"))
    const input = r.nonNegative(p["input_per_mtok"], join(path, "input_per_mtok"))
    const output = r.nonNegative(p["output_per_mtok"], join(path, "output_per_mtok"))
    for (const key of ["model", "input_per_mtok", "output_per_mtok"]) if (p[key] === undefined) r.problem(join(path, key), "is required")
    const provider = r.string(p["provider"], join(path, "provider"))
    const cacheRead = r.nonNegative(p["cache_read_per_mtok"], join(path, "cache_read_per_mtok"))
    const cacheWrite = r.nonNegative(p["cache_write_per_mtok"], join(path, "cache_write_per_mtok"))
    if (model === undefined || input === undefined || output === undefined) return []
    return [{
      model, inputPerMTok: input, outputPerMTok: output,
      ...(provider === undefined ? {} : { provider }),
      ...(cacheRead === undefined ? {} : { cacheReadPerMTok: cacheRead }),
      ...(cacheWrite === undefined ? {} : { cacheWritePerMTok: cacheWrite })
    }]
  })
  const budgets = r.record(llm?.["budgets"], "llm.budgets", ["max_calls", "max_concurrent"])
  const defaultMaxCalls = r.positive(budgets?.["max_calls"], "llm.budgets.max_calls", true)
  const timeout = r.positive(llm?.["timeout"], "llm.timeout", false, MAX_TIMEOUT_SECONDS)
  const maxRetries = llm?.["max_retries"] === 0 ? 0 : r.positive(llm?.["max_retries"], "llm.max_retries", true)
  const config: PluginLlmConfig = {
    plugins,
    auxiliary,
    llm: {
      timeoutMs: timeout === undefined ? DEFAULT_TIMEOUT_MS : timeout * 1000,
      maxRetries: maxRetries ?? DEFAULT_MAX_RETRIES,
      providers,
      profiles,
      fallback,
      ...(vision === undefined ? {} : { vision }),
      textOnlyModels: r.stringList(llm?.["text_only_models"], "llm.text_only_models") ?? [],
      maxImageBytes: r.positive(llm?.["max_image_bytes"], "llm.max_image_bytes", true) ?? DEFAULT_MAX_IMAGE_BYTES,
      prices,
      priceTable: r.oneOf(llm?.["price_table"], "llm.price_table", ["genai-prices", "none"] as const) ?? "genai-prices",
      ...(defaultMaxCalls === undefined ? {} : { defaultMaxCalls }),
      defaultMaxConcurrent: r.positive(budgets?.["max_concurrent"], "llm.budgets.max_concurrent", true) ?? DEFAULT_MAX_CONCURRENT
    }
  }
  if (r.issues.length === 0) {
    decodedConfigs.add(config)
    return config
  }
  const listed = r.issues.slice(0, 10).map((issue) => `${issue.path}: ${issue.message}`).join("; ")
  const more = r.issues.length > 10 ? `; … and ${r.issues.length - 10} more` : ""
  throw new PluginLlmConfigError({ issues: r.issues, message: `invalid plugin LLM config: ${listed}${more}` })
}

/** Configs this decoder produced: anything else handed to `createPluginLlm` is decoded first, whatever its shape. */
const decodedConfigs = new WeakSet<PluginLlmConfig>()

export const isDecodedConfig = (value: unknown): value is PluginLlmConfig =>
  typeof value === "object" && value !== null && decodedConfigs.has(value as PluginLlmConfig)

/** The grants of a plugin without an entry: nothing. */
export const closedGrants: PluginGrants = CLOSED
