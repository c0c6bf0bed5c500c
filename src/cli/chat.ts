import { stat } from "node:fs/promises"
import { resolve } from "node:path"
import { createInterface } from "node:readline"
import { parseSlashCommand } from "../plugin-llm/http-handler.ts"
import { Cancelled, isWorkerError } from "../worker/worker-error.ts"
import { Worker } from "../worker/worker.ts"
import type { Command } from "./args.ts"
import { configError } from "./cli-error.ts"
import { failureText } from "./failure-text.ts"
import { type ChatPlugins, loadChatPlugins } from "./chat-plugins.ts"
import { clientFromEnv, clientOptionsFromEnv } from "./provider-from-env.ts"
import { TranscriptRenderer } from "./renderer.ts"
import { Terminal } from "./terminal.ts"
import { demoTools } from "./tools/index.ts"

export interface ChatIo {
  readonly input: NodeJS.ReadableStream & { readonly isTTY?: boolean }
  readonly output: NodeJS.WritableStream & { readonly isTTY?: boolean }
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
}

const TOOL_TIMEOUT_MS = 30_000

const DEFAULT_SYSTEM_PROMPT =
  "You are a helpful assistant in a terminal. Use the tools when they help: clock for the date and time, calculator for arithmetic, read_file for files in the working folder. Keep answers short."

const PROMPT = "you› "

const checkRoot = async (root: string): Promise<string> => {
  const found = await stat(root).catch(() => undefined)
  if (found === undefined || !found.isDirectory()) throw configError(`--root ${JSON.stringify(root)} is not a folder`)
  return root
}

/**
 * The interactive chat. Lines are answered one at a time, in order (piped input works too). Ctrl-C during an
 * answer cancels that turn and forgets it, so the next question starts from a well-formed history; Ctrl-C
 * twice at the prompt, end of input or `/exit` quits.
 */
export const runChat = async (
  command: Extract<Command, { kind: "chat" }>,
  io: ChatIo = { input: process.stdin, output: process.stdout, env: process.env, cwd: process.cwd() }
): Promise<number> => {
  const client = clientFromEnv(command, io.env)
  const root = await checkRoot(resolve(io.cwd, command.root ?? "."))
  const plugins: ChatPlugins | undefined = command.config === undefined ? undefined : await loadChatPlugins(command.config, clientOptionsFromEnv(command, io.env), io.env, io.cwd)
  const terminal = Terminal.for(io.output, io.env)
  // A tool that hangs must not hold the chat: each call gets a deadline (Ctrl-C still cancels sooner).
  const worker = Worker.create({ client, systemPrompt: command.system ?? DEFAULT_SYSTEM_PROMPT, toolTimeoutMs: TOOL_TIMEOUT_MS })
  const report = worker.registerTools([...demoTools(root), ...(plugins?.tools ?? [])])
  const renderer = new TranscriptRenderer(terminal)
  worker.subscribe(renderer.subscriber)

  // Everything below goes through the terminal or the renderer, never to `io.output` directly: even the model name
  // and the folder name are someone else's text (readline's prompt is the one exception, and it is a constant).
  renderer.line(`llm-worker chat · ${client.provider} · ${client.model} · read_file sees ${root}`, "dim")
  for (const warning of report.warnings) renderer.line(`! ${warning.tool}: ${warning.message}`, "warn")
  const commandNames = plugins?.runtime.commands.list().map((c) => `/${c.name}`) ?? []
  if (plugins !== undefined) {
    renderer.line(`plugins: ${plugins.runtime.plugins.map((p) => p.id).join(", ") || "none"}${commandNames.length === 0 ? "" : ` · commands: ${commandNames.join(" ")}`}`, "dim")
  }
  renderer.line("Ctrl-C cancels an answer; Ctrl-C twice at the prompt, Ctrl-D or /exit quits.", "dim")

  const interactive = io.input.isTTY === true && io.output.isTTY === true
  const rl = createInterface({ input: io.input, output: io.output, terminal: interactive, prompt: PROMPT })
  let running: AbortController | undefined
  let interruptedAtPrompt = false
  const onInterrupt = (): void => {
    if (running !== undefined) {
      running.abort()
      return
    }
    if (interruptedAtPrompt) {
      rl.close()
      return
    }
    interruptedAtPrompt = true
    // The cursor is after the prompt, which readline wrote and the renderer does not know about.
    terminal.write("\n")
    renderer.line("(Ctrl-C again to quit)", "dim")
    rl.prompt()
  }
  // A terminal delivers Ctrl-C to readline; a pipe or `kill -INT` delivers it to the process.
  rl.on("SIGINT", onInterrupt)
  process.on("SIGINT", onInterrupt)
  // A terminal echoes a line when it is typed; one typed during an answer is echoed again after its own prompt.
  const typedDuringAnswer: Array<boolean> = []
  rl.on("line", () => typedDuringAnswer.push(running !== undefined))

  try {
    rl.prompt()
    for await (const raw of rl) {
      interruptedAtPrompt = false
      const echo = !interactive || typedDuringAnswer.shift() === true
      const line = raw.trim()
      if (line === "/exit" || line === "/quit") break
      // With plugins, `/<name> <args>` is a command (answered by the plugin, not sent to the chat's model).
      const slash = plugins === undefined ? undefined : parseSlashCommand(line)
      if (plugins !== undefined && slash !== undefined) {
        if (echo) renderer.line(line)
        // Ctrl-C aborts the command's signal (a plugin passes it on to its model calls) and stops waiting for it
        // at once, so a hanging plugin cannot hold the chat.
        const controller = new AbortController()
        running = controller
        try {
          const outcome = await plugins.runtime.commands.run(slash.name, slash.args, { signal: controller.signal })
          if (outcome.ok) renderer.line(outcome.output)
          else if (outcome.status === 499) renderer.line("(cancelled)", "dim")
          else renderer.line(`error: ${outcome.error}${outcome.status === 404 ? ` (commands: ${commandNames.join(" ") || "none"})` : ""}`, "error")
        } finally {
          running = undefined
        }
        rl.prompt()
        continue
      }
      if (line !== "") {
        if (echo) renderer.line(line)
        const before = worker.history().length
        const controller = new AbortController()
        running = controller
        try {
          await worker.run(line, { signal: controller.signal })
          renderer.newline()
        } catch (thrown) {
          renderer.newline()
          if (thrown instanceof Cancelled) renderer.line("(cancelled)", "dim")
          else if (isWorkerError(thrown)) renderer.line(`error: ${failureText(thrown)}`, "error")
          else throw thrown
          worker.truncateHistory(before)
        } finally {
          running = undefined
        }
      }
      rl.prompt()
    }
  } finally {
    process.off("SIGINT", onInterrupt)
    rl.close()
    renderer.newline()
  }
  return 0
}
