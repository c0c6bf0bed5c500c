import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { runCli } from "./cli-process.ts"

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

describe.concurrent("llm-worker demo (child process)", () => {
  for (const provider of ["openai", "openai-responses", "anthropic", "gemini"]) {
    // One run also asks for the requests, so the flag is checked without a fifth process.
    const showRequests = provider === "anthropic"
    it(`replays the recorded ${provider} session through the real tools and exits 0${showRequests ? " (--show-requests)" : ""}`, async () => {
      const { code, stdout, stderr } = await runCli(["demo", "--provider", provider, ...(showRequests ? ["--show-requests"] : [])])
      expect(stderr).toBe("")
      expect(code).toBe(0)
      const lines = stdout.split("\n")
      // First what the package is, then that this is a replay.
      expect(lines[0]).toMatch(/^llm-worker — typed tools for LLM agents\./)
      expect(lines.find((line) => line.startsWith("REPLAY"))).toBe("REPLAY — no model is called: this is a replay of a recorded stream.")
      expect(stdout.indexOf("REPLAY")).toBeLessThan(stdout.indexOf("you›"))
      // Arguments as the recorded model sent them (Anthropic puts a space after the colon).
      expect(stdout).toMatch(/→ calculator \{"expression": ?"\(17\.5 \* 4\) - 2\^3"\}/)
      expect(stdout).toMatch(/→ clock \{"timeZone": ?"Asia\/Tokyo"\}/)
      expect(stdout).toMatch(/→ read_file \{"path": ?"notes\.txt"\}/)
      // Results computed now by the real tools: the clock's reading is today's, not a recorded one.
      expect(stdout).toContain(`← calculator ok: {"expression":"(17.5 * 4) - 2^3","value":62}`)
      expect(stdout).toContain("← read_file ok: Pack the demo, ship on Friday.\\n")
      const utc = /← clock ok: \{"timeZone":"Asia\/Tokyo","utc":"([^"]+)"/.exec(stdout)?.[1]
      expect(Math.abs(Date.parse(utc ?? "") - Date.now())).toBeLessThan(120_000)
      // The final text comes after the results, from the second recorded response.
      const answer = 'notes.txt says: "Pack the demo, ship on Friday."'
      expect(stdout.indexOf(answer)).toBeGreaterThan(stdout.indexOf("← read_file ok"))
      expect(stdout).toContain("(2 requests to the replay server; the second carried 3 tool results)")
      // Where the code is (the test runs the sources) and what to try next.
      expect(stdout).toContain("The demo's code: src/cli/demo.ts (this replay) and src/cli/tools (the three tools).")
      expect(stdout).toMatch(/\nNext:\n {2}npm start -- --show-requests +also print the byte-exact tool definitions/)
      expect(stdout).toMatch(/\n {2}OPENAI_API_KEY=… npm run chat +chat with a real model/)
      // The byte-exact tool JSON only behind the flag.
      for (const dialect of ["openai-chat", "anthropic", "gemini"]) {
        expect(new RegExp(`\\n${escape(dialect)}:\\n\\[\\{`).test(stdout), dialect).toBe(showRequests)
      }
      expect(stdout.includes('"input_schema":{"additionalProperties":false')).toBe(showRequests)
      expect(stdout.includes('[{"functionDeclarations":[')).toBe(showRequests)
    })
  }

  it("refuses an unknown provider with one line and exit 2", async () => {
    const { code, stdout, stderr } = await runCli(["demo", "--provider", "nope"])
    expect(code).toBe(2)
    expect(stdout).toBe("")
    expect(stderr).toBe('llm-worker: unknown provider "nope"; choose one of: openai, openai-responses, anthropic, gemini, ollama, llama.cpp, vllm, openrouter, glm, qwen, stepfun\n')
  })
})

describe.concurrent("llm-worker usage (child process)", () => {
  it("prints the usage for --help and exits 0", async () => {
    const { code, stdout } = await runCli(["--help"])
    expect(code).toBe(0)
    expect(stdout).toMatch(/^Usage:\n {2}llm-worker demo/)
  })

  it("prints the version for --version, -v and version, as package.json has it", async () => {
    const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
    for (const flag of ["--version", "-v", "version"]) {
      const { code, stdout, stderr } = await runCli([flag])
      expect([code, stdout, stderr]).toEqual([0, `llm-worker ${version}\n`, ""])
    }
  })

  it("prints one command's own usage for `<command> --help`", async () => {
    for (const command of ["serve", "chat", "demo"]) {
      const { code, stdout } = await runCli([command, "--help"])
      expect(code).toBe(0)
      expect(stdout).toMatch(new RegExp(`^Usage:\\n {2}llm-worker ${command} \\[`))
      expect(stdout.match(/llm-worker (demo|chat|serve) \[/g)).toEqual([`llm-worker ${command} [`])
    }
  })

  it("prints the usage for no command, an unknown command or flag, and exits 2", async () => {
    const commands = [[], ["frobnicate"], ["chat", "--temperature", "2"]]
    const runs = await Promise.all(commands.map((args) => runCli(args)))
    for (const [n, { code, stdout, stderr }] of runs.entries()) {
      expect(code, commands[n]?.join(" ")).toBe(2)
      expect(stdout).toBe("")
      expect(stderr).toMatch(/^llm-worker: .+\n\nUsage:/)
      expect(stderr).not.toMatch(/\n\s+at /)
    }
  })
})
