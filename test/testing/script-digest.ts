import { createLlmClient, Item } from "../../src/index.ts"
import type { Event, LlmClient, ReasoningData, SchemeName, StopReason, Usage } from "../../src/index.ts"
import { startReplayProvider } from "../../src/testing/index.ts"
import type { ScriptedResponse, ScriptStep } from "../../src/testing/index.ts"

/** The provider behind each scheme, as a user would name it. */
export const PROVIDERS: Readonly<Record<SchemeName, string>> = {
  "openai-chat": "openai",
  "openai-responses": "openai-responses",
  anthropic: "anthropic",
  gemini: "gemini"
}
export const SCHEMES: ReadonlyArray<SchemeName> = ["openai-chat", "openai-responses", "anthropic", "gemini"]

export const clientFor = (scheme: SchemeName, baseUrl: string, overrides: Partial<Parameters<typeof createLlmClient>[0]> = {}): LlmClient =>
  createLlmClient({ provider: PROVIDERS[scheme], model: "scripted-model", apiKey: "test-key", baseUrl, retry: { maxRetries: 0 }, ...overrides })

/** Arguments compared as values: Gemini sends them as an object, which its decoder prints back as JSON. */
const canonicalJson = (text: string): string => {
  try {
    return JSON.stringify(JSON.parse(text))
  } catch {
    return text
  }
}

/** What one reply amounts to, whatever format carried it (see the digest rules in `script.test.ts`). */
export interface Digest {
  readonly blocks: ReadonlyArray<{ readonly kind: string; readonly id?: string; readonly name?: string; readonly content?: string }>
  readonly signatures: ReadonlyArray<string | undefined>
  readonly usage?: Usage
  readonly stopReason?: StopReason
  readonly outcome: string
}

const signatureOf = (data: ReasoningData | undefined): string | undefined =>
  data === undefined ? undefined : "signature" in data ? data.signature : "encryptedContent" in data ? data.encryptedContent : "thoughtSignature" in data ? data.thoughtSignature : undefined

/**
 * Blocks in the order they opened, with their content (tool arguments compared as JSON values). When the reply
 * failed, how each format closes its blocks differs (Chat aborts every open block, Gemini's calls arrive whole),
 * so only the text streamed before the failure, and the calls' names and ids, are kept.
 */
export const digest = (events: ReadonlyArray<Event>, outcome: string): Digest => {
  const failed = outcome !== "completed"
  const blocks = new Map<number, { kind: string; id?: string; name?: string; content: string; signature?: string }>()
  let usage: Usage | undefined
  let stopReason: StopReason | undefined
  for (const event of events) {
    switch (event.type) {
      case "block_start":
        blocks.set(event.index, { kind: event.block.kind, ...(event.block.kind === "tool_use" ? { id: event.block.id, name: event.block.name } : {}), content: "" })
        break
      case "block_delta": {
        const block = blocks.get(event.index)
        if (block !== undefined) block.content += event.delta.kind === "input_json" ? event.delta.json : event.delta.text
        break
      }
      case "block_stop": {
        const block = blocks.get(event.index)
        if (block === undefined) break
        if (event.final !== undefined) block.content = event.final
        const signature = signatureOf(event.reasoning)
        if (signature !== undefined) block.signature = signature
        break
      }
      case "usage": {
        const { type: _type, raw: _raw, ...counts } = event
        usage ??= counts
        break
      }
      case "status":
        if (event.status === "completed") stopReason = event.stopReason
        break
    }
  }
  const list = [...blocks.values()]
  return {
    blocks: list.map(({ kind, id, name, content }) =>
      kind === "tool_use" ? { kind, id, name, ...(failed ? {} : { content: canonicalJson(content) }) } : { kind, content }
    ),
    signatures: failed ? [] : list.filter((block) => block.kind === "thinking").map((block) => block.signature),
    ...(failed || usage === undefined ? {} : { usage }),
    ...(stopReason === undefined ? {} : { stopReason }),
    outcome
  }
}

/** Plays one step against a replay provider for `scheme` through the real client, and digests what came out. */
export const playThroughClient = async (scheme: SchemeName, step: ScriptStep): Promise<{ readonly events: ReadonlyArray<Event>; readonly digest: Digest }> => {
  const replay = await startReplayProvider({ scheme, script: [step] })
  try {
    const client = clientFor(scheme, replay.baseUrl)
    const events: Array<Event> = []
    let outcome = "completed"
    try {
      for await (const event of client.stream({ model: "scripted-model", items: [Item.userText("hi")], tools: [], config: {} })) events.push(event)
    } catch (error) {
      const tagged = error as { _tag: string; code?: string; message: string }
      outcome = tagged._tag === "LlmProviderError" ? `${tagged._tag} ${tagged.code}: ${tagged.message}` : tagged._tag
    }
    return { events, digest: digest(events, outcome) }
  } finally {
    await replay.close()
  }
}

/** What every format must yield for a reply: the script's own parts, usage and stop reason (see `digest`). */
export const expectedDigest = (scheme: SchemeName, step: ScriptedResponse, stopReason: StopReason): Digest => {
  const ending = step.ending
  const outcome = ending.type === "complete" ? "completed" : ending.type === "error" ? `LlmProviderError ${ending.code}: ${ending.message}` : "LlmNetworkError"
  const failed = outcome !== "completed"
  const parts = step.parts.filter((part) => part.type !== "stall")
  // Every provider reports usage on every reply: a script without any reports zeros.
  const usage = step.tokenUsage ?? { inputTokens: 0, outputTokens: 0 }
  return {
    blocks: parts.map((part) =>
      part.type === "tool_call"
        ? { kind: "tool_use", id: part.id, name: part.name, ...(failed ? {} : { content: canonicalJson(part.chunks.join("") || "{}") }) }
        : { kind: part.type === "reasoning" ? "thinking" : "text", content: part.chunks.join("") }
    ),
    // Chat Completions carries no reasoning signature.
    signatures: failed ? [] : parts.flatMap((part) => (part.type === "reasoning" ? [scheme === "openai-chat" ? undefined : part.signature] : [])),
    ...(failed
      ? {}
      : {
          usage: {
            inputTokens: usage.inputTokens,
            outputTokens: usage.outputTokens,
            totalTokens: usage.inputTokens + usage.outputTokens,
            ...(usage.reasoningTokens === undefined ? {} : { reasoningTokens: usage.reasoningTokens }),
            ...(usage.cacheReadTokens === undefined ? {} : { cacheReadTokens: usage.cacheReadTokens }),
            // Gemini reports no cache writes.
            ...(usage.cacheWriteTokens === undefined || scheme === "gemini" ? {} : { cacheWriteTokens: usage.cacheWriteTokens })
          }
        }),
    ...(failed ? {} : { stopReason }),
    outcome
  }
}
