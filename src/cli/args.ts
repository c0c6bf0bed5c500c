import { parseArgs } from "node:util"
import { providerNames } from "../llm/providers/registry.ts"
import { usageError } from "./cli-error.ts"

export interface ConnectionFlags {
  readonly provider?: string
  readonly model?: string
  readonly baseUrl?: string
}

export type CommandName = "demo" | "chat" | "serve"

export type Command =
  | { readonly kind: "help"; readonly command?: CommandName }
  | { readonly kind: "version" }
  | ({ readonly kind: "chat"; readonly system?: string; readonly root?: string; readonly config?: string } & ConnectionFlags)
  | { readonly kind: "demo"; readonly provider?: string; readonly showRequests: boolean }
  | { readonly kind: "serve"; readonly config?: string; readonly port?: number; readonly host?: string; readonly requestLog?: "quiet" | "verbose" }

/** Each command's own usage: what `llm-worker <command> --help` prints. */
export const COMMAND_USAGE: Readonly<Record<CommandName, string>> = {
  demo: `  llm-worker demo [--provider <name>] [--show-requests]
      Replays a recorded session offline (no model is called): a real client, worker and tools
      run against a local server that sends a provider's recorded stream. --show-requests also
      prints the byte-exact tool definitions each provider is sent.`,
  chat: `  llm-worker chat [--provider <name>] [--model <model>] [--base-url <url>] [--system <prompt>] [--root <folder>] [--config <file>]
      Chats with a model in the terminal, with the tools clock, calculator and read_file
      (read_file sees only --root, default: the current folder). Ctrl-C cancels the current
      answer; Ctrl-C twice at the prompt, Ctrl-D or /exit quits. --config loads the plugins of
      an llm-worker.yaml: their tools join the chat and /<name> <args> runs their commands.`,
  serve: `  llm-worker serve [--config <file>] [--port <port>] [--host <address>] [--verbose | --quiet]
      Runs the tool host: one Worker per role from the config (llm-worker.yaml when present),
      plugins in other processes register tools over HTTP, in-process plugins (plugins.entries)
      add tools, commands and ctx.llm. Port: --port, else MAIN_SERVER_PORT,
      else 48911 (0 picks a free one); bound to 127.0.0.1. Prints one line when ready.
      A role's provider and model default as for chat (LLM_WORKER_PROVIDER, else the first API
      key set; LLM_WORKER_MODEL, else that provider's default model); a role that cannot chat
      is named on stderr at start-up. stderr logs one line per request and per tool call
      (method, path or tool, status, duration; never a body or a key): --verbose adds roles,
      health checks and error texts, --quiet turns it off (config: server.request_log).`
}

const PROVIDERS_NOTE = `Providers: ${providerNames.join(", ")}
Without --provider, chat uses LLM_WORKER_PROVIDER, else the first of OPENAI_API_KEY,
ANTHROPIC_API_KEY, GEMINI_API_KEY that is set. LLM_WORKER_MODEL sets the model.
Local servers need no key: llm-worker chat --provider ollama --model qwen3`

export const USAGE = `Usage:
${COMMAND_USAGE.demo}
${COMMAND_USAGE.chat}
${COMMAND_USAGE.serve}
  llm-worker --help | --version

${PROVIDERS_NOTE}`

/** The usage of one command, or the whole usage. */
export const usageOf = (command: CommandName | undefined): string =>
  command === undefined ? USAGE : `Usage:\n${COMMAND_USAGE[command]}${command === "serve" ? "" : `\n\n${PROVIDERS_NOTE}`}`

const CHAT_OPTIONS = {
  provider: { type: "string" },
  model: { type: "string" },
  "base-url": { type: "string" },
  system: { type: "string" },
  root: { type: "string" },
  config: { type: "string" }
} as const

const DEMO_OPTIONS = { provider: { type: "string" }, "show-requests": { type: "boolean" } } as const

const SERVE_OPTIONS = { config: { type: "string" }, port: { type: "string" }, host: { type: "string" }, verbose: { type: "boolean" }, quiet: { type: "boolean" } } as const

const portFlag = (text: string | undefined): number | undefined => {
  if (text === undefined) return undefined
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) throw usageError(`serve: --port must be 0-65535, got ${JSON.stringify(text.slice(0, 40))}`)
  return Number(text)
}

/** Runs node's parser, turning its complaints (unknown flag, missing value) into usage errors. */
const parsing = <T>(command: string, parse: () => T): T => {
  try {
    return parse()
  } catch (thrown) {
    throw usageError(`${command}: ${thrown instanceof Error ? thrown.message : String(thrown)}`)
  }
}

/** Parses `argv` after the program name. Throws `CliError` (exit 2) for anything it does not understand. */
export const parseCommand = (argv: ReadonlyArray<string>): Command => {
  const [name, ...rest] = argv
  if (name === "--help" || name === "-h" || name === "help") return { kind: "help" }
  if (name === "--version" || name === "-v" || name === "version") return { kind: "version" }
  if (rest.includes("--help") || rest.includes("-h")) {
    return name === "chat" || name === "demo" || name === "serve" ? { kind: "help", command: name } : { kind: "help" }
  }
  switch (name) {
    case "chat": {
      const { values } = parsing("chat", () => parseArgs({ args: rest, options: CHAT_OPTIONS, strict: true, allowPositionals: false }))
      return {
        kind: "chat",
        ...(values.provider === undefined ? {} : { provider: values.provider }),
        ...(values.model === undefined ? {} : { model: values.model }),
        ...(values["base-url"] === undefined ? {} : { baseUrl: values["base-url"] }),
        ...(values.system === undefined ? {} : { system: values.system }),
        ...(values.root === undefined ? {} : { root: values.root }),
        ...(values.config === undefined ? {} : { config: values.config })
      }
    }
    case "demo": {
      const { values } = parsing("demo", () => parseArgs({ args: rest, options: DEMO_OPTIONS, strict: true, allowPositionals: false }))
      return { kind: "demo", showRequests: values["show-requests"] === true, ...(values.provider === undefined ? {} : { provider: values.provider }) }
    }
    case "serve": {
      const { values } = parsing("serve", () => parseArgs({ args: rest, options: SERVE_OPTIONS, strict: true, allowPositionals: false }))
      const port = portFlag(values.port)
      if (values.verbose === true && values.quiet === true) throw usageError("serve: --verbose and --quiet cannot be used together")
      return {
        kind: "serve",
        ...(values.config === undefined ? {} : { config: values.config }),
        ...(port === undefined ? {} : { port }),
        ...(values.host === undefined ? {} : { host: values.host }),
        ...(values.verbose === true ? { requestLog: "verbose" as const } : values.quiet === true ? { requestLog: "quiet" as const } : {})
      }
    }
    case undefined:
      throw usageError("no command given")
    default:
      throw usageError(`unknown command "${name}"`)
  }
}
