import { TaggedError } from "../error/tagged-error.ts"

/** An expected failure: printed as one line (no stack trace) and turned into the process exit code. */
export class CliError extends TaggedError("CliError")<{
  readonly message: string
  readonly exitCode: number
  /** True when the command line itself was wrong, so the usage text helps. */
  readonly showUsage: boolean
}> {}

/** The command line could not be understood: exit 2, with the usage text. */
export const usageError = (message: string): CliError => new CliError({ message, exitCode: 2, showUsage: true })

/** The command line was fine but the configuration (provider, key, model) is not: exit 2, one line. */
export const configError = (message: string): CliError => new CliError({ message, exitCode: 2, showUsage: false })
