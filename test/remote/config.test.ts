import { describe, expect, it } from "vitest"
import { DEFAULT_ROLE_NAME, HostConfigError, decodeHostConfig, parseHostConfig } from "../../src/remote/index.ts"

const issues = (text: string): ReadonlyArray<{ path: string; message: string }> => {
  try {
    parseHostConfig(text)
  } catch (error) {
    expect(error).toBeInstanceOf(HostConfigError)
    return (error as HostConfigError).issues
  }
  throw new Error("decoded")
}

describe("llm-worker.yaml", () => {
  it("decodes roles with defaults filled in", () => {
    const config = parseHostConfig(`
server:
  port: 0
  evict_after_connection_failures: 5
roles:
  小八:
    system_prompt: あなたは猫娘です。
    provider: openai
    model: gpt-4.1-mini
  helper:
    provider: anthropic
    model: claude-sonnet-4-5
    cache_lock: true
default_role: helper
`)
    expect(config.defaultRole).toBe("helper")
    expect(Object.keys(config.roles)).toEqual(["小八", "helper"])
    expect(config.roles["小八"]).toEqual({ system_prompt: "あなたは猫娘です。", provider: "openai", model: "gpt-4.1-mini", cache_lock: false, max_turns: 16 })
    expect(config.server).toMatchObject({ host: "127.0.0.1", port: 0, evict_after_connection_failures: 5, max_body_bytes: 1048576 })
  })

  it("has one default role when none is configured (empty file too)", () => {
    for (const text of ["", "roles: {}\n", "server: {}\n"]) {
      const config = parseHostConfig(text)
      expect(Object.keys(config.roles)).toEqual([DEFAULT_ROLE_NAME])
      expect(config.defaultRole).toBe(DEFAULT_ROLE_NAME)
    }
  })

  it("names every unknown key by its path", () => {
    expect(issues("sever:\n  port: 1\n")).toEqual([{ path: "sever", message: "unknown key" }])
    expect(issues("roles:\n  a:\n    sytem_prompt: hi\n")).toEqual([{ path: "roles.a.sytem_prompt", message: "unknown key" }])
    expect(issues("server:\n  prot: 1\n  hots: x\n").map((i) => i.path)).toEqual(["server.prot", "server.hots"])
  })

  it("refuses wrong types precisely: no string read as a boolean or a number", () => {
    expect(issues('roles:\n  a:\n    cache_lock: "false"\n')).toEqual([{ path: "roles.a.cache_lock", message: expect.stringMatching(/boolean/) }])
    expect(issues('server:\n  port: "48911"\n')).toEqual([{ path: "server.port", message: expect.stringMatching(/number/) }])
    expect(issues("server:\n  port: 70000\n")[0]?.path).toBe("server.port")
    expect(issues("roles: [a, b]\n")[0]?.path).toBe("roles")
    expect(issues("default_role: nobody\nroles:\n  a: {}\n")).toEqual([{ path: "default_role", message: expect.stringContaining("not one of the roles: a") }])
  })

  it("hands the plugin-LLM sections over undecoded", () => {
    const config = parseHostConfig("plugins:\n  trusted: [a, b]\nauxiliary:\n  vision: { model: x }\nllm:\n  anything: [1, {deep: true}]\n")
    expect(config.plugins).toEqual({ trusted: ["a", "b"] })
    expect(config.auxiliary).toEqual({ vision: { model: "x" } })
    expect(config.llm).toEqual({ anything: [1, { deep: true }] })
  })

  it("reports YAML syntax errors with their line, duplicate keys and alias bombs", () => {
    expect(issues("roles:\n  a: {\n")[0]?.message).toMatch(/line \d+/)
    expect(issues("server: {}\nserver: {}\n")[0]?.message).toMatch(/unique|duplicate/i)
    const bomb = `a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n`
    expect(issues(bomb).length).toBeGreaterThan(0)
  })

  it("decodes a config object from code with the same schema", () => {
    expect(() => decodeHostConfig({ roles: { a: { model: 3 } } })).toThrow(/roles\.a\.model/)
  })
})
