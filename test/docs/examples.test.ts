import { execFile } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

/**
 * The guides embed their examples verbatim, and the examples are real programs. Both facts are checked here:
 * every `<!-- example: … -->` block must equal its file byte for byte, and every example must run offline
 * (against the replay provider, never the network) and print what its guide says it prints.
 */

const root = fileURLToPath(new URL("../..", import.meta.url))
const guidesDir = join(root, "docs", "guides")
const examplesDir = join(root, "docs", "examples")

/** Key lines each example must print, in this order. Patterns, because ports and error wording vary by host. */
const EXPECTED: Readonly<Record<string, ReadonlyArray<string | RegExp>>> = {
  "typed-tools.ts": [
    'model sees: {"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1,"maximum":14}},"required":["city"],"additionalProperties":false}',
    'ok: {"city":"Paris","days":3,"sky":"sunny"}',
    "invalid: InvalidArgument: unit: not allowed; days: expected integer <= 14, got 20",
    /^not json: InvalidArgument: arguments are not valid JSON: /,
    "failure: ExecutionFailed: no forecast for Atlantis",
    "state: 2 5",
    "raw: hi",
    "group: notes.add saved #1"
  ],
  "tool-server.ts": [
    "registered: add,slow,broken warnings: 0",
    "factory runs: 1",
    'duplicate: true tool "add" is already registered',
    "names: add,broken,slow version: 1 same array: true",
    "call: ok 5",
    /^invalid: ToolExecution: .*a: expected number, got "2"/,
    "failed: ToolExecution: disk full",
    'unknown: ToolNotFound: unknown tool "nope"',
    'timeout: ToolTimeout: tool "slow" timed out after 50 ms',
    'cancel: ToolCancelled: call to "slow" was cancelled',
    "effect: ToolNotFound"
  ],
  "provider-definitions.ts": [
    "wire name: notes_search -> notes.search",
    "gemini name: notes.search",
    /^openai-chat: \[\{"function":\{"description":"Search notes","name":"notes_search","parameters":\{"additionalProperties":false,"properties":\{"query":\{"type":"string"\},"limit":\{"type":\["number","null"\]\}\},"required":\["query","limit"\],"type":"object"\},"strict":true\},"type":"function"\},.*"strict":false\},"type":"function"\}\]$/,
    /^anthropic: \[\{"description":"Search notes","input_schema":\{.*"required":\["query"\].*\},"name":"notes_search"\},/,
    /^gemini: \[\{"functionDeclarations":\[\{"description":"Search notes","name":"notes.search","parametersJsonSchema":/,
    "cached: true",
    'restored: {"query":"milk"}',
    "lint warning openai-chat notes.tag /properties/tags: sent with strict: false — a record (additionalProperties with a schema) cannot be strict",
    'lint warning gemini notes.tag /properties/tags: Gemini ignores keyword "propertyNames"',
    'lint error openai-chat: tools "notes.tag" and "notes_tag" both become "notes_tag" on openai-chat',
    'lint error anthropic: tools "notes.tag" and "notes_tag" both become "notes_tag" on anthropic'
  ],
  "timeline.ts": [
    "block 1 (get_weather toolu_a): 2 fragments",
    "block 2 (get_weather toolu_b): 1 fragments",
    "issue: unknown_block 7",
    "text: Checking both cities.",
    'calls: get_weather{"city":"Paris"} get_weather{"city":"Oslo"}',
    'stop: tool_use usage: {"inputTokens":120,"outputTokens":48,"totalTokens":168}',
    "history items: message,function_call,function_call"
  ],
  "llm-client.ts": [
    "warning: topK - OpenAI Chat Completions has no top_k; it is not sent",
    'event: {"type":"status","status":"started"}',
    'event: {"type":"block_delta","index":0,"delta":{"kind":"text","text":"Hello"}}',
    'event: {"type":"usage","inputTokens":12,"outputTokens":2,"totalTokens":14,"cacheReadTokens":8,"raw":{"prompt_tokens":12,"completion_tokens":2,"total_tokens":14,"prompt_tokens_details":{"cached_tokens":8}}}',
    'event: {"type":"status","status":"completed","stopReason":"end_turn"}',
    "attempts: 2 body sent = encodeRequest: true",
    'LlmConfigError: No API key for provider "anthropic": set ANTHROPIC_API_KEY or pass apiKey',
    /^LlmHttpError: HTTP 400 from http:\/\/127\.0\.0\.1:\d+\/v1\/messages after 1 attempt/,
    "LlmLimitExceeded: The response exceeded maxTextBytes = 8: 11 bytes of answer text (raise limits.maxTextBytes if this is expected)"
  ],
  "plugin-llm.ts": [
    "loaded: tldr, paste-to-tasks",
    "audit: tldr tldr gpt-4.1-mini 150 ok",
    "{\"ok\":true,\"output\":\"Ana ships the release Friday; someone must book the room.\"}",
    "audit: paste-to-tasks paste-to-tasks gpt-4.1-mini 150 ok",
    "{\"ok\":true,\"output\":\"- [Ana] ship the release\\n- [?] book the room\"}",
    "audit: tldr undefined gpt-4.1-mini undefined PluginLlmTrustError",
    "refused: model -> plugins.entries.tldr.llm.allow_model_override",
    "audit: remote-notes health gpt-4.1-mini 150 ok",
    "http: 200 pong {\"input_tokens\":120,\"output_tokens\":30,\"total_tokens\":150,\"cost_usd\":0.000096,\"cost_source\":\"genai-prices\"}"
  ],
  "structured-output.ts": [
    "sent: meeting_tasks strict: true",
    "- [Ana] ship the release",
    "- [?] book the room",
    'usage: {"inputTokens":40,"outputTokens":22,"totalTokens":62}',
    'refused: validate [{"path":["tasks",0,"action"],"message":"required"}] text: {"tasks":[{"owner":"Ana"}]}',
    'run: finished {"ok":true,"value":{"tasks":[]}}'
  ],
  "worker.ts": [
    "status: running",
    'model called: get_weather {"city":"Paris"}',
    'tool result: ok {"city":"Paris","sky":"sunny"}',
    'text delta: "Sunny in "',
    "status: finished",
    "result: finished turns: 1,2",
    "appended: message,function_call,function_call_output,message",
    "history length: 4 state: mutable"
  ],
  "worker-hooks.ts": [
    'OnPromptSubmit: {"type":"input_text","text":"Weather in Paris?"}',
    'OnToolCallDelta: get_weather += {"city":',
    "OnStreamComplete: turn 3, 5 events",
    /^result: finished, 3 requests, \d+ stream chunks$/,
    /^item: \{"type":"function_call_output","callId":"call_1","output":"sunny in Paris, FR \(.*\)","isError":false\}$/,
    'item: {"type":"message","role":"user","content":[{"type":"input_text","text":"Please answer in a full sentence."}]}',
    "system prompt sent: Turn 1. Be brief.",
    "OnAbort: HookAborted: cancelled by an OnPromptSubmit hook: no secrets",
    "second run: cancelled by an OnPromptSubmit hook: no secrets"
  ],
  "worker-typed-hooks.ts": [
    'plain PreToolCall: {"city":"paris"}',
    "typed PostToolCall: Paris, 3 days, 21 °C",
    'plain PostToolCall: {"city":"Paris","days":3,"celsius":21,"fahrenheit":70}',
    'HookFailed: PreToolCall hook for tool "get_weather" rewrote the arguments to a value its schema refuses: days: expected integer <= 14, got 30'
  ],
  "worker-pause-resume.ts": [
    "PreToolCall asked about: delete_files",
    "run: paused - delete_files needs approval | pending: true | ran: 0",
    "PreToolCall asked about: delete_files",
    "PreToolCall asked about: ping",
    "result: list_files ok - list_files ok",
    "result: delete_files denied - Tool call denied (not executed): the user said no",
    "result: ping skipped - Tool call skipped (not executed): pings are not needed",
    "resume: finished | pending: false | ran: list_files",
    "outputs in model order: call_list_files,call_delete_files,call_ping"
  ],
  "remote-tools.ts": [
    "host ready: true",
    'registered: true roles: ["assistant"] token issued: true',
    "refused: callback_url: host 169.254.169.254 is not a loopback address (127.0.0.0/8)",
    'plugin got get_weather({"city":"Tokyo"}) call_1, signature ok: true',
    "answer: Sunny in Tokyo, 22 °C.",
    'tool calls: [{"name":"get_weather","call_id":"call_1","status":"ok","output":"{\\"city\\":\\"Tokyo\\",\\"temp_c\\":22,\\"sky\\":\\"sunny\\"}"}]',
    'cleared: ["get_weather"]'
  ],
  "worker-cache-lock.ts": [
    /^state: cache-locked \| locked items: 1 \| locked bytes: \d+$/,
    "old object: StaleWorker",
    "locked: WorkerLocked",
    /^request \d+ bytes, 0 repeated from the previous, locked prefix intact: true$/,
    /^request \d+ bytes, \d+ repeated from the previous, locked prefix intact: true$/,
    "violation: CacheLockViolation prefix_bytes",
    "cancelled run: Cancelled",
    "history grew by: 1 (the prompt only)",
    "next run: finished",
    "requests sent: 4"
  ],
  "remote-plugin.ts": [
    'the host is told: {"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}',
    "the model would read: InvalidArgument: city: expected string, got 7",
    "callbacks at: http://127.0.0.1:<port>/tools/<name>",
    "get_weather attempt 1: POST /api/tools/register: ECONNREFUSED - retrying",
    "get_weather attempt 2: POST /api/tools/register: ECONNREFUSED - retrying",
    "get_weather attempt 3: POST /api/tools/register: ECONNREFUSED - giving up until the host answers",
    "clock attempt 1: POST /api/tools/register: ECONNREFUSED - retrying",
    "clock attempt 3: POST /api/tools/register: ECONNREFUSED - giving up until the host answers",
    "ready: RegistrationRefused",
    "status: get_weather gave_up, clock gave_up",
    "stopped"
  ]
}

interface Embedded {
  readonly guide: string
  readonly example: string
  readonly code: string
}

const MARKER = /<!-- example: docs\/examples\/([\w.-]+\.ts) -->\n```ts\n([\s\S]*?)```\n<!-- \/example -->/g

const guides = readdirSync(guidesDir).filter((name) => name.endsWith(".md")).sort()
const embedded: ReadonlyArray<Embedded> = guides.flatMap((guide) => {
  const text = readFileSync(join(guidesDir, guide), "utf8")
  const found = [...text.matchAll(MARKER)].map((m) => ({ guide, example: m[1] as string, code: m[2] as string }))
  // A marker the pattern did not match (a typo, a missing fence) would otherwise escape the check.
  expect(found.length, `${guide}: malformed example marker`).toBe(text.split("<!-- example:").length - 1)
  return found
})
const examples = readdirSync(examplesDir).filter((name) => name.endsWith(".ts")).sort()

/** Each expected line must appear in order; unexpected extra lines are allowed. */
const matchesInOrder = (stdout: string, expected: ReadonlyArray<string | RegExp>): string | undefined => {
  const lines = stdout.split("\n")
  let at = 0
  for (const want of expected) {
    const found = lines.findIndex((line, i) => i >= at && (typeof want === "string" ? line === want : want.test(line)))
    if (found < 0) return `missing (after line ${at}): ${String(want)}`
    at = found + 1
  }
  return undefined
}

const run = (file: string): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    const env = { ...process.env, OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", GEMINI_API_KEY: "", GOOGLE_API_KEY: "" }
    execFile(process.execPath, ["--conditions=@llm-worker/source", "--import", "tsx", join("docs", "examples", file)], { cwd: root, env, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr })
    )
  })

describe("docs: guides embed their examples verbatim", () => {
  it("every example is embedded in some guide, and every embed names an existing example", () => {
    expect(new Set(embedded.map((e) => e.example))).toEqual(new Set(examples))
  })
  it.each(examples)("%s is short enough to read in a guide (at most 60 lines)", (file) => {
    expect(readFileSync(join(examplesDir, file), "utf8").trimEnd().split("\n").length).toBeLessThanOrEqual(60)
  })
  it.each(embedded.map((e) => [e.guide, e.example, e.code] as const))("%s embeds %s byte for byte", (_guide, example, code) => {
    expect(code).toBe(readFileSync(join(examplesDir, example), "utf8"))
  })
})

describe("docs: examples run offline and print what the guides say", () => {
  it("every example has expectations", () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(examples)
  })
  it.concurrent.each(examples)("%s", async (file) => {
    const { code, stdout, stderr } = await run(file)
    expect(stderr, `${file} wrote to stderr`).toBe("")
    expect(code, `${file} exited with ${code}\n${stdout}`).toBe(0)
    expect(matchesInOrder(stdout, EXPECTED[file] ?? []), stdout).toBeUndefined()
  }, 90_000) // each example is a fresh Node process compiling TypeScript; several share two cores
})

describe("docs: relative links resolve", () => {
  const pages = [
    join(root, "docs", "architecture.md"),
    ...guides.map((guide) => join(guidesDir, guide)),
    ...readdirSync(join(root, "docs", "decisions")).filter((name) => name.endsWith(".md")).map((name) => join(root, "docs", "decisions", name))
  ]
  it.each(pages.map((page) => [page.slice(root.length)] as const))("%s", (page) => {
    const text = readFileSync(join(root, page), "utf8")
    const targets = [...text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1] as string).filter((t) => !/^[a-z]+:/.test(t))
    const broken = targets.filter((target) => !existsSync(join(dirname(join(root, page)), target)))
    expect(broken).toEqual([])
  })
})
