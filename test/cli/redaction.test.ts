import { afterEach, describe, expect, it } from "vitest"
import { type ReplayProvider, startReplayProvider } from "../../src/testing/index.ts"
import { leaks, transcriptWithKey } from "../support/key-in-provider-errors.ts"
import { runCli } from "./cli-process.ts"

const servers: Array<ReplayProvider> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const KEY = "sk-proj-Y2xpIGtleQ/+abc=0123456789xyz"

describe("llm-worker chat never prints the provider key it was given, whatever the provider echoes", () => {
  it("an in-stream error event and an HTTP error body carrying OPENAI_API_KEY print as one line with the key as ***", async () => {
    const server = await startReplayProvider({
      scheme: "openai-chat",
      script: [
        // The key as the error's code, then inside its message as JSON text.
        { kind: "stream", transcript: transcriptWithKey({ scheme: "openai-chat", fixture: "error-mid-stream", place: 5, wrap: 0 }, KEY) },
        { kind: "stream", transcript: transcriptWithKey({ scheme: "openai-chat", fixture: "error-mid-stream", place: 2, wrap: 2 }, KEY) },
        { kind: "status", status: 401, body: JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}.`, type: "invalid_request_error", param: null, code: "invalid_api_key" } }) }
      ]
    })
    servers.push(server)
    const { code, stdout, stderr } = await runCli(["chat", "--provider", "openai", "--base-url", server.baseUrl], { OPENAI_API_KEY: KEY }, "one\ntwo\nthree\n")
    expect(code).toBe(0)
    expect(stdout.match(/^error: /gm)?.length).toBe(3)
    expect(stdout).toContain("Incorrect API key provided: ***.")
    expect(leaks(`${stdout}\n${stderr}`, KEY), stdout).toBe(false)
  }, 30_000)
})
