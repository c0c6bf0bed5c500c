import { isWorkerError } from "../worker/worker-error.ts"
import { readFileSync } from "node:fs"
import { USAGE, parseCommand, usageOf } from "./args.ts"
import { runChat } from "./chat.ts"
import { CliError } from "./cli-error.ts"
import { runDemo } from "./demo.ts"
import { Terminal } from "./terminal.ts"

/** Never throws itself: a thrown value's getters and `toString` may be anything. */
const describeUnexpected = (thrown: unknown): string => {
  try {
    return String(thrown instanceof Error ? (thrown.stack ?? `${thrown.name}: ${thrown.message}`) : thrown)
  } catch {
    return "(a value that cannot be described)"
  }
}

/** The installed package's version: `package.json` sits two folders up from both `src/cli/` and `dist/cli/`. */
const packageVersion = (): string => {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: unknown }
  return typeof manifest.version === "string" ? manifest.version : "unknown"
}

/** Runs one command and returns the exit code; expected failures are printed as one line, never as a stack. */
const main = async (argv: ReadonlyArray<string>): Promise<number> => {
  // Error lines quote the command line, the environment and the provider: untrusted text, printed only through a Terminal.
  const stderr = new Terminal(process.stderr, false)
  try {
    const command = parseCommand(argv)
    switch (command.kind) {
      case "help":
        new Terminal(process.stdout, false).message(`${usageOf(command.command)}\n`)
        return 0
      case "version":
        new Terminal(process.stdout, false).message(`llm-worker ${packageVersion()}\n`)
        return 0
      case "demo":
        await runDemo(command.provider, Terminal.for(process.stdout), { showRequests: command.showRequests })
        return 0
      case "chat":
        return await runChat(command)
      case "serve": {
        // Loaded only for `serve`: the HTTP server, YAML and config schemas would slow every other command's start.
        const { runServe } = await import("./serve.ts")
        return await runServe(command)
      }
    }
  } catch (thrown) {
    if (thrown instanceof CliError) {
      stderr.message(`llm-worker: ${thrown.message}\n`)
      if (thrown.showUsage) stderr.message(`\n${USAGE}\n`)
      return thrown.exitCode
    }
    if (isWorkerError(thrown)) {
      stderr.message(`llm-worker: ${thrown._tag}: ${thrown.message}\n`)
      return 1
    }
    // A bug, not an expected failure: the stack is shown, but through the Terminal like everything else, since the
    // message may quote a provider or the model.
    stderr.message(`llm-worker: unexpected error: ${describeUnexpected(thrown)}\n`)
    return 1
  }
}

// A reader that goes away (`llm-worker demo | head`) is not an error worth a stack trace.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0)
  throw error
})

process.exitCode = await main(process.argv.slice(2))
