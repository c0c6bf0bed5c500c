import { execFile } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { type ReplayProvider, sseText, startReplayProvider } from "../../src/testing/index.ts"

const root = new URL("../../", import.meta.url)
const run = promisify(execFile)

/** The README's example, exactly as printed: the first ts block after the "In twenty lines" heading. */
const readmeExample = (): string => {
  const readme = readFileSync(new URL("README.md", root), "utf8")
  const section = readme.slice(readme.indexOf("## In twenty lines"))
  const match = /```ts\n([\s\S]*?)```/.exec(section)
  if (match?.[1] === undefined) throw new Error("README has no ts example under 'In twenty lines'")
  return match[1]
}

const event = (type: string, body: Record<string, unknown>) => ({ event: type, data: JSON.stringify({ type, ...body }) })
const messageStart = event("message_start", {
  message: { id: "msg_01", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 412, output_tokens: 1 } }
})
const finish = (reason: string) => [
  event("message_delta", { delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 20 } }),
  event("message_stop", {})
]
const toolTurn = sseText([
  messageStart,
  event("content_block_start", { index: 0, content_block: { type: "tool_use", id: "toolu_01A", name: "get_weather", input: {} } }),
  event("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: '{"city": "Kyoto", ' } }),
  event("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: '"days": 3}' } }),
  event("content_block_stop", { index: 0 }),
  ...finish("tool_use")
])
const answerTurn = sseText([
  messageStart,
  event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
  event("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Kyoto stays sunny for the next 3 days." } }),
  event("content_block_stop", { index: 0 }),
  ...finish("end_turn")
])

describe("the README example", () => {
  let replay: ReplayProvider | undefined
  afterAll(async () => replay?.close())

  it("runs as printed against a recorded Anthropic stream, and the tool really runs", async () => {
    replay = await startReplayProvider({
      scheme: "anthropic",
      script: [
        { kind: "stream", transcript: toolTurn },
        { kind: "stream", transcript: answerTurn }
      ]
    })
    const dir = new URL(".tmp/", root)
    mkdirSync(dir, { recursive: true })
    const file = new URL("readme-example.ts", dir)
    writeFileSync(file, readmeExample())
    const { stdout } = await run(process.execPath, ["--conditions=@llm-worker/source", "--import", "tsx", file.pathname], {
      cwd: root,
      env: { ...process.env, ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: replay.baseUrl }
    })
    expect(stdout).toContain("Kyoto stays sunny for the next 3 days.")
    expect(stdout).toContain("finished; every request kept the locked prefix: true")
    const second = JSON.parse(replay.requests[1]?.body ?? "{}") as { messages: Array<{ content: Array<Record<string, unknown>> }> }
    const result = second.messages.at(-1)?.content[0]
    expect(result).toMatchObject({ type: "tool_result", tool_use_id: "toolu_01A", content: '{"city":"Kyoto","days":3,"sky":"sunny"}' })
  })
})
