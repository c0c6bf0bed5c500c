/**
 * What to say when nothing listens where a request went. A refused connection to a remote host is an ordinary
 * network failure; on this machine it almost always means a local model server that is not running, so the
 * message names the server and the command that starts it.
 */

interface LocalServer {
  readonly name: string
  readonly start: string
}

/** The local presets (src/llm/providers) by name, and the servers people run on their default ports. */
const BY_PROVIDER: Readonly<Record<string, LocalServer>> = {
  ollama: { name: "Ollama", start: "ollama serve" },
  "llama.cpp": { name: "llama.cpp's llama-server", start: "llama-server -m <model.gguf> --port 8080" },
  vllm: { name: "vLLM", start: "vllm serve <model> --port 8000" },
  lmstudio: { name: "LM Studio's server", start: "lms server start --port 1234" }
}

const BY_PORT: Readonly<Record<string, LocalServer>> = {
  "11434": BY_PROVIDER["ollama"] as LocalServer,
  "8080": BY_PROVIDER["llama.cpp"] as LocalServer,
  "8000": BY_PROVIDER["vllm"] as LocalServer,
  "1234": BY_PROVIDER["lmstudio"] as LocalServer
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\]|\[::ffff:127(?:\.\d{1,3}){3}\])$/i

/** True for the refusal fetch reports: its `cause` (or one of an AggregateError's errors) has code ECONNREFUSED. */
export const isConnectionRefused = (thrown: unknown): boolean => {
  const codeOf = (u: unknown): unknown => (typeof u === "object" && u !== null ? (u as { code?: unknown }).code : undefined)
  const cause: unknown = thrown instanceof Error ? thrown.cause : undefined
  if (codeOf(cause) === "ECONNREFUSED") return true
  const errors: unknown = typeof cause === "object" && cause !== null ? (cause as { errors?: unknown }).errors : undefined
  return Array.isArray(errors) && errors.length > 0 && errors.every((e) => codeOf(e) === "ECONNREFUSED")
}

/**
 * The message for a refused connection to `url`, or undefined when the host is not this machine (then the
 * network error's own text is as good as any). `provider`: the client's provider name, which picks the server
 * when it is a local preset; otherwise the port does, and an unknown port gets the general advice.
 */
export const connectionRefusedMessage = (url: string, provider: string | undefined): string | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return undefined
  }
  if (!LOOPBACK.test(parsed.hostname)) return undefined
  const port = parsed.port === "" ? (parsed.protocol === "https:" ? "443" : "80") : parsed.port
  const where = `${parsed.hostname}:${port}`
  const server = (provider === undefined ? undefined : BY_PROVIDER[provider]) ?? BY_PORT[port]
  if (server === undefined) return `Connection refused at ${where}: nothing is listening there; start the model server or check baseUrl`
  return `Connection refused at ${where}: is ${server.name} running there? Start it with \`${server.start}\`, or pass the baseUrl it listens on`
}
