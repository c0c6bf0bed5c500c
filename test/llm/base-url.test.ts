import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import fc from "fast-check"
import { describe, expect, expectTypeOf, it } from "vitest"
import {
  Item,
  type LlmClientOptions,
  LlmConfigError,
  LlmNetworkError,
  type ProviderName,
  createLlmClient,
  isProviderName,
  ollama,
  openAiCompatible,
  providerNames
} from "../../src/index.ts"

const configError = (options: LlmClientOptions): LlmConfigError => {
  try {
    createLlmClient(options)
  } catch (thrown) {
    if (thrown instanceof LlmConfigError) return thrown
    throw thrown
  }
  throw new Error("expected LlmConfigError")
}

describe("baseUrl is checked when the client is created", () => {
  it('"localhost:8080" is refused with the URL to use', () => {
    const error = configError({ provider: "llama.cpp", model: "m", baseUrl: "localhost:8080" })
    expect(error).toMatchObject({ _tag: "LlmConfigError", option: "baseUrl", suggestion: "http://localhost:8080" })
    expect(error.message).toBe('Base URL "localhost:8080" for provider "llama.cpp" has no scheme; did you mean "http://localhost:8080"?')
    expect(configError({ provider: "openai", model: "m", apiKey: "k", baseUrl: "api.example.com/v1" }).suggestion).toBe("https://api.example.com/v1")
  })

  it("refuses other schemes, no host, and credentials without printing them", () => {
    expect(configError({ provider: "ollama", model: "m", baseUrl: "ftp://example.com" }).message).toContain('uses "ftp:"; only http: and https: are supported')
    expect(configError({ provider: "ollama", model: "m", baseUrl: "not a url" }).message).toContain("is not a valid URL")
    const secret = configError({ provider: "ollama", model: "m", baseUrl: "http://me:hunter2@localhost:11434/v1?key=sk-123" })
    expect(secret.message).toBe(
      'Base URL "http://***@localhost:11434/v1" for provider "ollama" contains a user name or password, which fetch refuses; pass the key as apiKey (or in headers)'
    )
  })

  it("any string: a client or an LlmConfigError, and never a password in the message", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.webUrl().map((url) => url.replace("://", "://user:s3cr3tpw@"))), (baseUrl) => {
        try {
          createLlmClient({ provider: "ollama", model: "m", baseUrl })
        } catch (thrown) {
          expect(thrown).toBeInstanceOf(LlmConfigError)
          expect((thrown as Error).message).not.toContain("s3cr3tpw")
        }
      }),
      { numRuns: 300 }
    )
  })

  it("valid URLs pass unchanged", () => {
    expect(() => createLlmClient({ provider: "ollama", model: "m", baseUrl: "http://127.0.0.1:11434/v1/" })).not.toThrow()
    expect(() => createLlmClient({ provider: "openai", model: "m", apiKey: "k", baseUrl: "https://[::1]:8443/v1" })).not.toThrow()
  })
})

const refusedPort = async (): Promise<number> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

const failureOf = async (options: LlmClientOptions): Promise<LlmNetworkError> => {
  const client = createLlmClient({ ...options, retry: { maxRetries: 0 } })
  try {
    for await (const _ of client.stream({ model: "m", items: [Item.userText("hi")], tools: [], config: {} })) void _
  } catch (thrown) {
    if (thrown instanceof LlmNetworkError) return thrown
    throw thrown
  }
  throw new Error("expected a network error")
}

describe("a refused local connection names the server to start", () => {
  it("a local preset names itself", async () => {
    const port = await refusedPort()
    const error = await failureOf({ provider: "ollama", model: "m", baseUrl: `http://127.0.0.1:${port}/v1` })
    expect(error.message).toBe(
      `Connection refused at 127.0.0.1:${port}: is Ollama running there? Start it with \`ollama serve\`, or pass the baseUrl it listens on`
    )
    expect(error.cause).toBeInstanceOf(Error)
  })

  it("a custom compatible server on a port nothing is known for gets the general advice", async () => {
    const port = await refusedPort()
    const mine = openAiCompatible({ name: "mine", baseUrl: `http://localhost:${port}/v1`, apiKeyEnv: [], requiresApiKey: false })
    const error = await failureOf({ provider: mine, model: "m" })
    expect(error.message).toBe(`Connection refused at localhost:${port}: nothing is listening there; start the model server or check baseUrl`)
  })
})

describe("provider names", () => {
  it("are a union that completes, still taking any string and any Provider value", () => {
    expectTypeOf<"ollama">().toExtend<ProviderName>()
    expectTypeOf<"anthropic">().toExtend<LlmClientOptions["provider"]>()
    expectTypeOf(ollama).toExtend<LlmClientOptions["provider"]>()
    expectTypeOf(openAiCompatible({ name: "lmstudio", baseUrl: "http://localhost:1234/v1", apiKeyEnv: [], requiresApiKey: false })).toExtend<LlmClientOptions["provider"]>()
    expectTypeOf<string>().toExtend<LlmClientOptions["provider"]>()
    expect(providerNames).toContain("llama.cpp")
    const fromEnv: string = "vllm"
    if (isProviderName(fromEnv)) expectTypeOf(fromEnv).toEqualTypeOf<ProviderName>()
    expect(isProviderName("vllm")).toBe(true)
    expect(isProviderName("nope")).toBe(false)
    expect(configError({ provider: "nope", model: "m" }).message).toContain("known providers: openai, openai-responses")
  })
})
