import type { PluginContext } from "llm-worker/plugin-llm"

// The seed's chat example: a slash command that summarises its argument with the user's active model.
export const manifest = { name: "tldr", version: "1.0.0", description: "Summarise the supplied text in one paragraph." }

export function register(ctx: PluginContext): void {
  ctx.registerCommand({
    name: "tldr",
    handler: (raw) => tldr(ctx, raw),
    description: "Summarise the supplied text in one paragraph.",
    argsHint: "<text>"
  })
}

async function tldr(ctx: PluginContext, rawArgs: string): Promise<string> {
  const text = rawArgs.trim()
  if (text === "") return "Usage: /tldr <text to summarise>"
  const result = await ctx.llm.complete({
    messages: [
      { role: "system", content: "Summarise the user's text in one tight paragraph. No preamble." },
      { role: "user", content: text }
    ],
    maxTokens: 256,
    temperature: 0.3,
    purpose: "tldr"
  })
  return result.text
}
