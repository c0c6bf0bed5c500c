import { spawn, type ChildProcess } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { describe } from "vitest"

export const root = fileURLToPath(new URL("../../..", import.meta.url))

/** Suites that spawn the real host (`llm-worker serve`) as a child process. */
export const describeWithHost = describe

/** A child process whose stdout lines are collected and can be awaited. */
export interface Child {
  readonly process: ChildProcess
  readonly lines: Array<string>
  /** Resolves with the first line (collected so far or later) matching; rejects after `ms` or on exit. */
  waitFor(match: RegExp | ((line: string) => boolean), ms?: number): Promise<string>
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

export const spawnChild = (command: string, args: ReadonlyArray<string>, env: Record<string, string> = {}): Child => {
  const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  const lines: Array<string> = []
  const waiters = new Set<() => void>()
  let stderr = ""
  child.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)))
  createInterface({ input: child.stdout! }).on("line", (line) => {
    lines.push(line)
    for (const wake of waiters) wake()
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })))
  const waitFor = (match: RegExp | ((line: string) => boolean), ms = 20_000): Promise<string> => {
    const test = typeof match === "function" ? match : (l: string) => match.test(l)
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined
      const check = () => {
        const found = lines.find(test)
        if (found === undefined) return
        waiters.delete(check)
        clearTimeout(timer)
        resolve(found)
      }
      timer = setTimeout(() => (waiters.delete(check), reject(new Error(`no line matching ${String(match)} within ${ms} ms; stdout: ${lines.join("\n")}\nstderr: ${stderr}`))), ms)
      waiters.add(check)
      void exited.then(({ code, signal }) => {
        if (!waiters.has(check)) return
        check()
        if (waiters.has(check)) (waiters.delete(check), clearTimeout(timer), reject(new Error(`exited (${code ?? signal}) before a line matching ${String(match)}; stderr: ${stderr}`)))
      })
      check()
    })
  }
  return { process: child, lines, waitFor, exited }
}

/** Kills a child that is still running and waits for it. */
export const killChild = async (child: Child, signal: NodeJS.Signals = "SIGKILL"): Promise<void> => {
  if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill(signal)
  await child.exited
}

/** The plugin fixture (decorator form) as its own process, pointed at `host`. */
export const spawnPlugin = (host: string, env: Record<string, string> = {}): Child =>
  spawnChild(process.execPath, ["--import", "tsx", "test/remote/fixtures/weather-plugin.ts"], { LLMW_HOST: host, ...env })

/** Parsed JSON events a plugin child printed so far. */
export const eventsOf = (child: Child): Array<{ type: string; [k: string]: unknown }> =>
  child.lines.flatMap((l) => {
    try {
      return [JSON.parse(l)]
    } catch {
      return []
    }
  })

export interface HostChild extends Child {
  readonly url: string
  readonly port: number
  readonly instanceId: string
}

/** The ready line docs/guides/remote-tools.md fixes: `llm-worker host listening on http://127.0.0.1:<port> (instance <id>)`. */
const READY = /^llm-worker host listening on (http:\/\/127\.0\.0\.1:(\d+)) \(instance ([^)]+)\)$/

/**
 * The host config for these tests: one role on the OpenAI Chat wire format, whose endpoint is a replay server
 * (OPENAI_BASE_URL). The keys follow the issue (roles with system prompt, provider, model; default_role).
 */
export const hostConfig = (): string =>
  ["roles:", "  helper:", "    provider: openai", "    model: replay-model", '    system_prompt: "Answer briefly."', "default_role: helper", ""].join("\n")

/** Spawns `llm-worker serve` on `port` (0: a free one) and resolves once its ready line is printed. */
export const spawnHost = async (port: number, env: Record<string, string> = {}, configText: string = hostConfig()): Promise<HostChild> => {
  const dir = mkdtempSync(join(tmpdir(), "llmw-host-"))
  const config = join(dir, "llm-worker.yaml")
  writeFileSync(config, configText)
  const child = spawnChild(process.execPath, ["--import", "tsx", "src/cli/main.ts", "serve", "--port", String(port), "--config", config], {
    OPENAI_API_KEY: "sk-test",
    ...env
  })
  const line = await child.waitFor(READY, 30_000)
  const [, url, p, instanceId] = READY.exec(line) as RegExpExecArray
  return { ...child, url: url as string, port: Number(p), instanceId: instanceId as string }
}
