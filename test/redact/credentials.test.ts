import { describe, expect, it } from "vitest"
import { environmentSecrets } from "../../src/redact/environment.ts"
import { urlCredentials } from "../../src/redact/redact-url.ts"

describe("credentials found by value", () => {
  it("a URL's userinfo (written and decoded) and credential parameters", () => {
    expect(urlCredentials("https://user:p%40ss@host.example/v1?alt=sse&key=AIza123&api_key=k2#token=t3")).toEqual([
      "user",
      "user",
      "p%40ss",
      "p@ss",
      "AIza123",
      "AIza123",
      "k2",
      "k2",
      "t3",
      "t3"
    ])
    expect(urlCredentials("http://localhost:11434/v1")).toEqual([])
  })

  it("an environment's credential-named variables, named ones, and URL variables' credentials", () => {
    const env = {
      OPENAI_API_KEY: "sk-a",
      GITHUB_TOKEN: "ghp-b",
      MY_KEY_VAR: "kept",
      HOME: "/root",
      OPENAI_BASE_URL: "https://u:pw@proxy.example/v1",
      UNSET: undefined
    }
    expect(environmentSecrets(env, ["MY_KEY_VAR"])).toEqual(["sk-a", "ghp-b", "kept", "u", "u", "pw", "pw"])
  })
})
