import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const REPO = fileURLToPath(new URL("../..", import.meta.url))

/** Keys that would pick a provider by themselves: removed so the tests see only what they set. */
const PROVIDER_VARIABLES = [
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "GEMINI_API_KEY",
  "GOOGLE_API_KEY",
  "LLM_WORKER_PROVIDER",
  "LLM_WORKER_MODEL",
  "OPENAI_BASE_URL",
  "ANTHROPIC_BASE_URL",
  "GEMINI_BASE_URL"
]

export interface CliProcess {
  readonly child: ChildProcessWithoutNullStreams
  stdout(): string
  stderr(): string
  /** Resolves once stdout matches, after `from` characters; rejects after `timeoutMs` with what was printed. */
  waitFor(pattern: RegExp, from?: number, timeoutMs?: number): Promise<void>
  /** Resolves with the exit code (or the signal name). */
  readonly exited: Promise<number | string>
}

/** The CLI as a real child process: `node --import tsx src/cli/main.ts ...args`. */
export const startCli = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}): CliProcess => {
  const base = { ...process.env }
  for (const name of PROVIDER_VARIABLES) delete base[name]
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], { cwd: REPO, env: { ...base, ...env } })
  let out = ""
  let err = ""
  const listeners = new Set<() => void>()
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk
    for (const listener of [...listeners]) listener()
  })
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk
  })
  const exited = new Promise<number | string>((resolve) => child.once("close", (code, signal) => resolve(code ?? signal ?? "unknown")))
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor: (pattern, from = 0, timeoutMs = 45_000) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (!pattern.test(out.slice(from))) return
          listeners.delete(check)
          clearTimeout(timer)
          resolve()
        }
        const timer = setTimeout(() => {
          listeners.delete(check)
          reject(new Error(`timed out waiting for ${pattern}; stdout so far:\n${out}\nstderr:\n${err}`))
        }, timeoutMs)
        listeners.add(check)
        check()
      })
  }
}

/** Runs the CLI to completion with `stdin` as its whole input. */
export const runCli = async (args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}, stdin = "") => {
  const cli = startCli(args, env)
  cli.child.stdin.end(stdin)
  const code = await cli.exited
  return { code, stdout: cli.stdout(), stderr: cli.stderr() }
}
