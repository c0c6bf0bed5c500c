import { HostConfigError } from "../remote/host/config.ts"
import { startToolHost } from "../remote/host/tool-host.ts"
import type { Command } from "./args.ts"
import { configError } from "./cli-error.ts"
import { Terminal } from "./terminal.ts"

const DEFAULT_CONFIG = "llm-worker.yaml"

/**
 * `llm-worker serve`: starts the tool host and runs until SIGINT / SIGTERM, then closes it (running turns are
 * cancelled, connections closed) and exits 0. The ready line on stdout is the one a spawning process waits for.
 */
export const runServe = async (command: Extract<Command, { kind: "serve" }>): Promise<number> => {
  const stderr = new Terminal(process.stderr, false)
  // Listening for the signals before anything is printed: a parent may signal the moment it reads the ready line.
  let stopRequested!: () => void
  const stopped = new Promise<void>((resolve) => (stopRequested = resolve))
  const stop = (): void => {
    process.off("SIGINT", stop)
    process.off("SIGTERM", stop)
    stopRequested()
  }
  process.on("SIGINT", stop)
  process.on("SIGTERM", stop)
  let host
  try {
    host = await startToolHost({
      configPath: command.config ?? DEFAULT_CONFIG,
      configRequired: command.config !== undefined,
      ...(command.port === undefined ? {} : { port: command.port }),
      ...(command.host === undefined ? {} : { host: command.host }),
      ...(command.requestLog === undefined ? {} : { requestLog: command.requestLog }),
      log: (line) => stderr.message(`${line}\n`)
    })
  } catch (thrown) {
    stop()
    if (thrown instanceof HostConfigError) throw configError(thrown.message)
    const code = (thrown as { code?: unknown } | null)?.code
    if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") {
      throw configError(`cannot listen: ${thrown instanceof Error ? thrown.message : String(thrown)}`)
    }
    throw thrown
  }
  new Terminal(process.stdout, false).message(`${host.readyLine}\n`)
  await stopped
  await host.close()
  return 0
}
