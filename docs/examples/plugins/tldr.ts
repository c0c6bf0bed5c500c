import type { PluginContext } from "llm-worker/plugin-llm"

// The seed's chat example: a slash command that summarises its argument with the user's active model.
export const manifest = { name: "tldr", version: "1.0.0", description: "Summarise the supplied text in one paragraph." }

export function register(ctx: PluginContext): void {
  ctx.registerCommand({
    name: "tldr",
    handler: (raw, { signal }) => tldr(ctx, raw, signal),
    description: "Summarise the supplied text in one paragraph.",
    argsHint: "<text>"
  })
}

async function tldr(ctx: PluginContext, rawArgs: string, signal: AbortSignal): Promise<string> {
  const text = rawArgs.trim()
  if (text === "") return "Usage: /tldr <text to summarise>"
  const result = await ctx.llm.complete({
    messages: [
      { role: "system", content: "Summarise the user's text in one tight paragraph. No preamble." },
      { role: "user", content: text }
    ],
    maxTokens: 256,
    temperature: 0.3,
    purpose: "tldr",
    // Ctrl-C in the chat (or the HTTP client hanging up) stops the model call too.
    signal
  })
  return result.text
}
