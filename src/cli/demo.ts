import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { createLlmClient } from "../llm/llm-client.ts"
import { providerNames, providers } from "../llm/providers/registry.ts"
import { toolsFragment } from "../schema/provider-tools.ts"
import { startReplayProvider } from "../testing/replay-provider.ts"
import { Worker } from "../worker/worker.ts"
import { configError } from "./cli-error.ts"
import { RECORDED_MODELS, loadRecording } from "./recordings.ts"
import { TranscriptRenderer } from "./renderer.ts"
import type { Terminal } from "./terminal.ts"
import { demoTools } from "./tools/index.ts"

/** The question the recorded model was asked, and the file its read_file call reads. */
export const DEMO_PROMPT = "What time is it in Tokyo, what is (17.5 * 4) - 2^3, and what does notes.txt say?"
export const DEMO_NOTES = "Pack the demo, ship on Friday.\n"

/** A short pause between replayed SSE events, so the stream is seen arriving rather than appearing at once. */
const EVENT_GAP_MS = 12

/** Byte offsets just after each SSE event, so the replay writes one event at a time. */
const eventBoundaries = (transcript: string): ReadonlyArray<number> => {
  const offsets: Array<number> = []
  for (const match of transcript.matchAll(/\r\n\r\n|\n\n/g)) offsets.push(Buffer.byteLength(transcript.slice(0, match.index + match[0].length)))
  return offsets
}

const replayed = (transcript: string) => ({ kind: "stream" as const, transcript, splitAt: eventBoundaries(transcript), gapMs: EVENT_GAP_MS })

/** One paragraph on what the package is, printed before anything else. */
const ABOUT = [
  "llm-worker — typed tools for LLM agents. Declare a tool once (zod, Effect Schema, JSON Schema); a Worker runs",
  "the tool-calling loop against OpenAI, Anthropic, Gemini and OpenAI-compatible servers (Ollama, llama.cpp, vLLM…),",
  "with hooks, streaming, cancellation, and a cache lock that keeps every request's prefix byte-identical.",
  ""
]

/** Where this demo's code is, as a path the reader can open: relative to the current folder when inside it. */
const demoSource = (): { readonly demo: string; readonly tools: string; readonly fromSources: boolean } => {
  const file = fileURLToPath(import.meta.url)
  const shown = (path: string): string => {
    const near = relative(process.cwd(), path)
    return near.startsWith("..") ? path : near
  }
  return { demo: shown(file), tools: shown(join(dirname(file), "tools")), fromSources: file.endsWith(".ts") }
}

/** What to try after the demo; a checkout runs the sources (`npm start`, `npm run chat`), an install the command. */
const nextSteps = (fromSources: boolean): ReadonlyArray<string> => {
  const demo = fromSources ? "npm start --" : "npx llm-worker demo"
  const chat = fromSources ? "npm run chat" : "npx llm-worker chat"
  const chatWith = fromSources ? "npm run chat --" : chat
  const rows: ReadonlyArray<readonly [string, string]> = [
    [`${demo} --show-requests`, "also print the byte-exact tool definitions each provider is sent"],
    [`${demo} --provider anthropic`, "the same session in another wire format (or gemini, openai-responses)"],
    [`OPENAI_API_KEY=… ${chat}`, "chat with a real model (or ANTHROPIC_API_KEY, GEMINI_API_KEY)"],
    [`${chatWith} --provider ollama --model qwen3`, "a local model, no key"]
  ]
  const width = Math.max(...rows.map(([command]) => command.length))
  return ["Next:", ...rows.map(([command, what]) => `  ${command.padEnd(width)}   ${what}`), ""]
}

/**
 * Replays a recorded session through the real stack: a local HTTP server sends the provider's recorded SSE bytes,
 * the real client decodes them, the worker runs the requested calls on the real demo tools (in a scratch folder
 * holding notes.txt), sends the results back and streams the recorded answer.
 */
export const runDemo = async (providerName: string | undefined, out: Terminal, options: { readonly showRequests?: boolean } = {}): Promise<void> => {
  const provider = providers.get(providerName ?? "openai")
  if (provider === undefined) throw configError(`unknown provider "${providerName}"; choose one of: ${providerNames.join(", ")}`)
  const scheme = provider.scheme.name
  const server = await startReplayProvider({
    scheme,
    script: [replayed(loadRecording(scheme, "tool-calls")), replayed(loadRecording(scheme, "answer"))]
  })
  const root = await mkdtemp(join(tmpdir(), "llm-worker-demo-"))
  try {
    await writeFile(join(root, "notes.txt"), DEMO_NOTES)
    out.message(
      [
        ...ABOUT,
        "REPLAY — no model is called: this is a replay of a recorded stream.",
        `A local server at ${server.baseUrl} sends a recorded ${scheme === provider.name ? scheme : `${provider.name} (${scheme})`} stream`,
        "through the real client, timeline and worker; the tool calls it asks for run for real on the demo tools,",
        "and a second recorded response consumes their results.",
        ""
      ].join("\n") + "\n"
    )
    // `env: {}`: a key or base URL in the caller's environment must not redirect the replay.
    const client = createLlmClient({ provider, model: RECORDED_MODELS[scheme], apiKey: "replay", baseUrl: server.baseUrl, env: {}, retry: { maxRetries: 0 } })
    const worker = Worker.create({ client, systemPrompt: "You are a concise assistant. Use the tools when they help." })
    worker.registerTools(demoTools(root))
    const renderer = new TranscriptRenderer(out)
    worker.subscribe(renderer.subscriber)
    out.message(`you› ${DEMO_PROMPT}\n`)
    const result = await worker.run(DEMO_PROMPT)
    renderer.newline()
    const outputs = result.items.filter((item) => item.type === "function_call_output").length
    out.message(`\n(${server.requests.length} requests to the replay server; the second carried ${outputs} tool results)\n`, "dim")

    if (options.showRequests === true) {
      const specs = worker.toolServerHandle().toolDefinitionsSorted()
      out.message("\nThe demo tools as each provider is shown them (byte-exact `tools` values):\n")
      for (const dialect of ["openai-chat", "anthropic", "gemini"] as const) out.message(`\n${dialect}:\n${toolsFragment(specs, dialect)}\n`)
    }
    const where = demoSource()
    out.message(
      [
        "",
        `The demo's code: ${where.demo} (this replay) and ${where.tools} (the three tools).`,
        "Guides with runnable examples: docs/guides/ (in the package too).",
        "",
        ...nextSteps(where.fromSources)
      ].join("\n")
    )
  } finally {
    await Promise.all([server.close(), rm(root, { recursive: true, force: true })])
  }
}
