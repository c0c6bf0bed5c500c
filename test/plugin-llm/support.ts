import { afterEach } from "vitest"
import type { SchemeName } from "../../src/llm/scheme.ts"
import type { AuditRecord } from "../../src/plugin-llm/audit.ts"
import { createPluginRuntime, type PluginRuntime, type PluginRuntimeOptions } from "../../src/plugin-llm/plugin-runtime.ts"
import { type ReplayProvider, type ReplayStep, startReplayProvider } from "../../src/testing/index.ts"
import { answerSse } from "../support/answer-sse.ts"

/** The key every test route uses; no result, audit line or error may ever contain it. */
export const SECRET = "sk-test-SECRET-do-not-leak-1234567890"

const servers: Array<ReplayProvider> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

export const replay = async (scheme: SchemeName, script: ReadonlyArray<ReplayStep>): Promise<ReplayProvider> => {
  const server = await startReplayProvider({ scheme, script })
  servers.push(server)
  return server
}

/** A server answering every request with the same text. */
export const answering = (scheme: SchemeName, text: string, usage?: Parameters<typeof answerSse>[2]): Promise<ReplayProvider> =>
  replay(scheme, [{ kind: "stream", transcript: answerSse(scheme, text, usage) }])

export const PROVIDER_OF: Readonly<Record<SchemeName, string>> = {
  "openai-chat": "openai",
  "openai-responses": "openai-responses",
  anthropic: "anthropic",
  gemini: "gemini"
}

/** A runtime whose active role is `server` (OpenAI Chat unless said otherwise), audit lines captured. */
export const runtimeOn = (
  server: ReplayProvider,
  options: Partial<PluginRuntimeOptions> & { readonly scheme?: SchemeName; readonly model?: string } = {}
): { runtime: PluginRuntime; audit: Array<AuditRecord> } => {
  const audit: Array<AuditRecord> = []
  const { scheme = "openai-chat", model = "gpt-4.1-mini", ...rest } = options
  const runtime = createPluginRuntime({
    active: { provider: PROVIDER_OF[scheme], model, apiKey: SECRET, baseUrl: server.baseUrl, retry: { maxRetries: 0 } },
    audit: (record) => audit.push(record),
    env: { ROUTE_KEY: SECRET, WORK_KEY: `${SECRET}-work` },
    ...rest,
    config: rest.config ?? {}
  })
  return { runtime, audit }
}

/** `llm` config naming a replay server as provider `name`. */
export const endpoint = (server: ReplayProvider, type = "openai") => ({ type, base_url: server.baseUrl, api_key_env: "ROUTE_KEY" })

/** Runs `promise` and returns what it rejected with (fails the test if it resolved). */
export const rejection = async (promise: Promise<unknown>): Promise<{ _tag: string; message: string } & Record<string, unknown>> => {
  try {
    await promise
  } catch (thrown) {
    return thrown as { _tag: string; message: string } & Record<string, unknown>
  }
  throw new Error("expected a rejection")
}
