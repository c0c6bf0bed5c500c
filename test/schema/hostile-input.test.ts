import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import {
  anthropicScheme,
  canonicalJson,
  canonicalSchemaJson,
  defineTool,
  formatIssues,
  JsonTooDeepError,
  type JsonSchema,
  lintToolSpec,
  makeArgumentCodec,
  normalizeJsonSchema,
  restoreStrictArguments,
  type ToolContext,
  toolsFragment,
  type ToolSpec,
  UnsupportedSchemaError
} from "../../src/index.ts"

/** ≈10 KiB of `[[[…]]]` and of `{"a":{"a":…}}`, parsed: what a hostile model sends as arguments. */
const LEVELS = 5_000
const deepArray = JSON.parse(`${"[".repeat(LEVELS)}${"]".repeat(LEVELS)}`) as unknown
const deepObject = JSON.parse(`${'{"a":'.repeat(LEVELS)}1${"}".repeat(LEVELS)}`) as unknown
const nested = (levels: number): unknown => JSON.parse(`${"[".repeat(levels)}${"]".repeat(levels)}`)

const sync = <A>(r: A | Promise<A>): A => {
  if (r instanceof Promise) throw new Error("expected a synchronous decode")
  return r
}

const decodeText = async (tool: ReturnType<typeof defineTool>, text: string): Promise<string> => {
  const [meta, impl] = tool()
  const context: ToolContext = { callId: "c1", signal: new AbortController().signal, meta }
  try {
    return await impl.execute(text, context)
  } catch (error) {
    return `${(error as { _tag?: string })._tag}: ${(error as Error).message}`
  }
}

describe("depth bounds: hostile nesting is a precise error, never a RangeError", () => {
  const open = makeArgumentCodec({
    type: "object",
    properties: { any: {}, list: { type: "array", items: {} }, record: { type: "object", additionalProperties: {} } }
  })

  it("the codec refuses arguments deeper than 64 levels, whatever the schema lets through", () => {
    for (const args of [{ any: deepArray }, { list: deepArray }, { record: { k: deepObject } }, { any: deepObject }]) {
      const r = sync(open.decode(args))
      expect(r).toEqual({ ok: false, issues: [{ path: [], message: "arguments nested deeper than 64 levels" }] })
      if (!r.ok) expect(formatIssues(r)).toBe("arguments nested deeper than 64 levels")
    }
    // Exactly at the bound is fine: the arguments object is level 1.
    expect(sync(open.decode({ any: nested(63) })).ok).toBe(true)
    expect(sync(open.decode({ any: nested(64) })).ok).toBe(false)
    // Library decoders never see the value either (zod's would recurse).
    const zodCodec = makeArgumentCodec(z.object({ v: z.array(z.unknown()) }))
    expect(sync(zodCodec.decode({ v: deepArray }))).toMatchObject({ ok: false })
  })

  it("the argument bound is configurable", () => {
    const shallow = makeArgumentCodec({ type: "object", properties: { any: {} } }, { maxArgumentDepth: 3 })
    expect(sync(shallow.decode({ any: [[]] })).ok).toBe(true)
    expect(formatIssues(sync(shallow.decode({ any: [[[]]] })) as never)).toBe("arguments nested deeper than 3 levels")
  })

  it("defineTool's decode answers InvalidArgument for deep argument text", async () => {
    const tool = defineTool({ name: "t", description: "d", parameters: z.object({ v: z.unknown() }), execute: () => "ran" })
    expect(await decodeText(tool, `{"v":${JSON.stringify(nested(40))}}`)).toBe("ran")
    expect(await decodeText(tool, `{"v":${"[".repeat(LEVELS)}${"]".repeat(LEVELS)}}`)).toBe(
      "InvalidArgument: arguments nested deeper than 64 levels"
    )
  })

  it("canonicalJson and canonicalSchemaJson throw JsonTooDeepError for deep or cyclic values", () => {
    const cyclic: Record<string, unknown> = {}
    cyclic["self"] = cyclic
    const selfJson = { toJSON(): unknown { return this } }
    for (const value of [deepArray, deepObject, cyclic, selfJson]) {
      expect(() => canonicalJson(value)).toThrow(JsonTooDeepError)
      expect(() => canonicalSchemaJson(value)).toThrow(JsonTooDeepError)
    }
    expect(() => canonicalJson(deepArray)).toThrow("value nested deeper than 256 levels")
    expect(canonicalJson(nested(256))).toBe(JSON.stringify(nested(256)))
    expect(() => canonicalJson(nested(3), { maxDepth: 2 })).toThrow(JsonTooDeepError)
  })

  it("restoreStrictArguments throws JsonTooDeepError instead of overflowing; the result always re-serialises", () => {
    const schema: JsonSchema = { type: "object", properties: { x: { type: "array", items: {} } }, additionalProperties: false }
    expect(() => restoreStrictArguments(schema, { x: deepArray })).toThrow("arguments nested deeper than 64 levels")
    expect(() => restoreStrictArguments(schema, { x: deepArray })).toThrow(JsonTooDeepError)
    expect(JSON.stringify(restoreStrictArguments(schema, { x: nested(40) }))).toBe(JSON.stringify({ x: nested(40) }))
    // A hand-written $ref cycle through anyOf terminates too.
    const cycle: JsonSchema = { $defs: { a: { anyOf: [{ $ref: "#/$defs/a" }, { type: "object" }] } }, type: "object", properties: { v: { $ref: "#/$defs/a" } } }
    expect(restoreStrictArguments(cycle, { v: { k: 1 } })).toEqual({ v: { k: 1 } })
  })

  it("normalizeJsonSchema refuses too-deep, $ref-chained and exponentially inlined schemas with a typed error", () => {
    let deep: JsonSchema = { type: "string" }
    for (let i = 0; i < LEVELS; i++) deep = { type: "array", items: deep }
    const root = (x: JsonSchema): JsonSchema => ({ type: "object", properties: { x } })
    expect(() => normalizeJsonSchema(root(deep))).toThrow(UnsupportedSchemaError)
    expect(() => normalizeJsonSchema(root(deep))).toThrow("schema nested deeper than 256 levels")
    // A flat $defs holding a chain of 5,000 $refs.
    const chain = Object.fromEntries(
      Array.from({ length: LEVELS }, (_, i): [string, JsonSchema] => [`d${i}`, i === LEVELS - 1 ? { type: "string" } : { $ref: `#/$defs/d${i + 1}` }])
    ) as Record<string, JsonSchema>
    expect(() => normalizeJsonSchema({ ...root({ $ref: "#/$defs/d0" }), $defs: chain })).toThrow(UnsupportedSchemaError)
    // Thirty definitions each using the next twice: 2^30 copies once inlined.
    const laughs = Object.fromEntries(
      Array.from({ length: 30 }, (_, i): [string, JsonSchema] => [
        `l${i}`,
        i === 29 ? { type: "string" } : { type: "object", properties: { a: { $ref: `#/$defs/l${i + 1}` }, b: { $ref: `#/$defs/l${i + 1}` } } }
      ])
    ) as Record<string, JsonSchema>
    const bomb = { ...root({ $ref: "#/$defs/l0" }), $defs: laughs }
    expect(() => normalizeJsonSchema(bomb)).toThrow("more than 100000 subschemas")
    expect(() => normalizeJsonSchema(bomb, { maxNodes: 50 })).toThrow("more than 50 subschemas")
    // Both bounds are configurable, and a typed error at definition for every schema source.
    expect(() => normalizeJsonSchema(root({ type: "array", items: { type: "string" } }), { maxDepth: 3 })).toThrow("schema nested deeper than 3 levels")
    expect(() => makeArgumentCodec(root(deep))).toThrow(UnsupportedSchemaError)
    expect(() => defineTool({ name: "deep", description: "d", parameters: root(deep), execute: () => "" })).toThrow(UnsupportedSchemaError)
  })

  it("provider fragments and lint of a raw deep spec give typed errors or findings", () => {
    let deep: JsonSchema = { type: "string" }
    for (let i = 0; i < LEVELS; i++) deep = { type: "array", items: deep }
    const spec: ToolSpec = { name: "deep", description: "d", inputSchema: { type: "object", properties: { x: deep } } }
    for (const dialect of ["openai-chat", "anthropic", "gemini"] as const) expect(() => toolsFragment([spec], dialect)).toThrow(JsonTooDeepError)
    const findings = lintToolSpec(spec)
    expect(findings.length).toBeGreaterThan(0)
    expect(findings.every((f) => f.severity === "error" && f.message === "the input schema is nested deeper than 256 levels")).toBe(true)
  })
})

describe("bounded error texts", () => {
  const weather = makeArgumentCodec({
    type: "object",
    properties: { city: { type: "string" }, days: { type: "integer", maximum: 14 }, tags: { type: "array", items: { type: "string" } } },
    required: ["city"]
  })

  it("keeps the one-line messages for ordinary mistakes", () => {
    const r = sync(weather.decode({ days: 20 }))
    expect(r.ok ? "" : formatIssues(r).split("; ").sort()).toEqual(["city: required", "days: expected integer <= 14, got 20"])
  })

  it("quotes a bounded prefix of a huge unknown key", () => {
    const key = "k".repeat(8 * 1024 * 1024)
    const r = sync(weather.decode({ city: "x", [key]: 1 }))
    expect(r.ok).toBe(false)
    if (r.ok) return
    const text = formatIssues(r)
    expect(text).toBe(`["${"k".repeat(80)}… (${key.length - 80} more characters)"]: not allowed`)
    // Keys that are not plain identifiers are quoted (and escaped), so the path stays unambiguous.
    expect(formatIssues([{ path: ["a b", 0, "c.d", "ok"], message: "x" }])).toBe('["a b"][0]["c.d"].ok: x')
  })

  it("lists a handful of issues, keeps 20, counts the rest", () => {
    const r = sync(weather.decode({ city: "x", tags: Array.from({ length: 1000 }, (_, i) => i) }))
    expect(r).toMatchObject({ ok: false, omittedIssues: 980 })
    if (r.ok) return
    expect(r.issues).toHaveLength(20)
    expect(formatIssues(r)).toBe(
      "tags[0]: expected string, got 0; tags[1]: expected string, got 1; tags[2]: expected string, got 2; " +
        "tags[3]: expected string, got 3; tags[4]: expected string, got 4; … and 995 more"
    )
    expect(formatIssues(r, { listed: 1 })).toBe("tags[0]: expected string, got 0; … and 999 more")
  })

  it("stops at the first issue for arguments of a million values, so no million error objects are built", () => {
    const r = sync(weather.decode({ city: "x", tags: new Array<number>(1_000_000).fill(7) }))
    expect(r).toEqual({ ok: false, issues: [{ path: ["tags", 0], message: "expected string, got 7" }], stoppedEarly: true })
    // The model is told that fixing the one issue shown may not be enough.
    if (r.ok) return
    expect(formatIssues(r)).toBe(
      "tags[0]: expected string, got 7 (checking stopped at the first issue: the arguments are too large to list every one)"
    )
    // Both limits are configurable; the size counts every value (here: the object, the array and its items).
    const small = makeArgumentCodec({ type: "object", properties: { v: { type: "array", items: { type: "string" } } } }, { fullCheckSize: 4, keptIssues: 1 })
    expect(sync(small.decode({ v: [1, 2] }))).toEqual({ ok: false, issues: [{ path: ["v", 0], message: "expected string, got 1" }], omittedIssues: 1 })
    expect(sync(small.decode({ v: [1, 2, 3] }))).toEqual({
      ok: false,
      issues: [{ path: ["v", 0], message: "expected string, got 1" }],
      stoppedEarly: true
    })
  })

  it("bounds what a schema contributes: a thousand enum values, a huge pattern", () => {
    const codec = makeArgumentCodec({
      type: "object",
      properties: { e: { enum: Array.from({ length: 1000 }, (_, i) => `v${i}`) }, p: { type: "string", pattern: `^${"a".repeat(10_000)}$` } }
    })
    const r = sync(codec.decode({ e: "nope", p: "b" }))
    expect(r.ok ? "" : formatIssues(r)).toBe(
      'e: expected one of "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", … and 992 more, got "nope"; ' +
        `p: expected a string matching ^${"a".repeat(79)}… (${10_002 - 80} more characters), got "b"`
    )
  })

  it("caps the issues a library decoder returns", () => {
    const many = {
      "~standard": {
        version: 1 as const,
        vendor: "test",
        validate: () => ({ issues: Array.from({ length: 500 }, (_, i) => ({ message: `bad ${i}`, path: [`k${i}`] })) }),
        jsonSchema: { input: () => ({ type: "object", additionalProperties: {} }), output: () => ({ type: "object" }) }
      }
    }
    const r = sync(makeArgumentCodec(many).decode({}))
    expect(r).toMatchObject({ ok: false, omittedIssues: 480 })
    if (!r.ok) expect(formatIssues(r)).toBe("k0: bad 0; k1: bad 1; k2: bad 2; k3: bad 3; k4: bad 4; … and 495 more")
  })
})

describe("tool fragments never go stale", () => {
  const tool = (name: string): ToolSpec => ({ name, description: `${name} tool`, inputSchema: { type: "object", properties: {}, additionalProperties: false } })

  it("a tool pushed into a plain array after a first call is in the next fragment and request body", () => {
    const tools: Array<ToolSpec> = [tool("a")]
    for (const dialect of ["openai-chat", "openai-responses", "anthropic", "gemini"] as const) {
      const array: Array<ToolSpec> = [tool("a")]
      expect(toolsFragment(array, dialect)).not.toContain('"b')
      array.push(tool("b"))
      expect(toolsFragment(array, dialect)).toContain("b tool")
    }
    const request = { model: "m", items: [], tools, config: {} }
    expect(anthropicScheme.encodeRequest(request)).not.toContain("b tool")
    tools.push(tool("b"))
    expect(anthropicScheme.encodeRequest(request)).toContain("b tool")
  })

  it("a schema edited in place is seen too", () => {
    const spec = tool("a")
    const schema = spec.inputSchema as { properties: Record<string, unknown> }
    const tools = [spec]
    expect(toolsFragment(tools, "openai-chat")).not.toContain("extra")
    schema.properties["extra"] = { type: "string" }
    expect(toolsFragment(tools, "openai-chat")).toContain("extra")
  })
})

/** JSON-like values whose keys are often the names that assignment gets wrong. */
const hostileKey = fc.oneof(fc.constantFrom("__proto__", "constructor", "prototype", "toString", "hasOwnProperty"), fc.string({ maxLength: 4 }))
const { value: hostileValue } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 4 })),
    fc.array(tie("value"), { maxLength: 3 }),
    // fromEntries defines own properties, "__proto__" included, exactly as JSON.parse does.
    fc.array(fc.tuple(hostileKey, tie("value")), { maxLength: 4 }).map((entries) => Object.fromEntries(entries))
  )
}))

describe("__proto__, constructor and prototype keys stay data", () => {
  it("canonicalJson keeps every key, in any insertion order, and never touches a prototype (property)", () => {
    fc.assert(
      fc.property(hostileValue, (value) => {
        const text = canonicalJson(value)
        expect(text).toBe(canonicalJson(JSON.parse(JSON.stringify(value))))
        // Re-parsed canonical text equals the input, and is its own canonical form: no key was lost or moved.
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)))
        expect(canonicalJson(JSON.parse(text))).toBe(text)
        const reversed = JSON.parse(JSON.stringify(value), (_key, v: unknown) =>
          typeof v === "object" && v !== null && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v
        ) as unknown
        expect(canonicalJson(reversed)).toBe(text)
      })
    )
    expect(canonicalJson(JSON.parse('[{"z":1,"__proto__":0}]'))).toBe('[{"__proto__":0,"z":1}]')
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined()
  })

  it("an open record decodes such keys as own properties; a closed schema refuses them by name (property)", () => {
    const record = makeArgumentCodec({ type: "object", additionalProperties: {} })
    const closed = makeArgumentCodec({ type: "object", properties: { constructor: { type: "string" }, prototype: { type: "integer" } } })
    fc.assert(
      fc.property(fc.array(fc.tuple(hostileKey, hostileValue), { maxLength: 4 }), (entries) => {
        const args = JSON.parse(JSON.stringify(Object.fromEntries(entries))) as Record<string, unknown>
        const r = sync(record.decode(args))
        expect(r.ok).toBe(true)
        if (r.ok) {
          expect(Object.getPrototypeOf(r.value)).toBe(Object.prototype)
          expect(JSON.stringify(r.value)).toBe(JSON.stringify(args))
        }
      })
    )
    // Optional "constructor" is not read through the prototype chain.
    expect(sync(closed.decode({}))).toEqual({ ok: true, value: {} })
    expect(sync(closed.decode({ constructor: "c", prototype: 1 })).ok).toBe(true)
    expect(sync(closed.decode(JSON.parse('{"__proto__":{"x":1}}')))).toEqual({ ok: false, issues: [{ path: ["__proto__"], message: "not allowed" }] })
    // The decoder cannot check a property named __proto__: refused at definition rather than at every call.
    expect(() => makeArgumentCodec(JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}'))).toThrow(UnsupportedSchemaError)
  })

  it("normalisation and the strict restore keep such names (property)", () => {
    fc.assert(
      fc.property(fc.uniqueArray(hostileKey, { minLength: 1, maxLength: 4 }), (names) => {
        const properties = Object.fromEntries(names.map((n) => [n, { type: "object", properties: { n: { type: "integer" } } }]))
        const normalized = normalizeJsonSchema({ type: "object", properties })
        // Object key order (integer-like keys first), whatever the names.
        const order = Object.keys(properties)
        expect(Object.keys(normalized["properties"] as object)).toEqual(order)
        const value = Object.fromEntries(names.map((n) => [n, JSON.parse('{"n":1}') as unknown]))
        const restored = restoreStrictArguments(normalized, JSON.parse(JSON.stringify(value))) as object
        expect(Object.keys(restored)).toEqual(order)
        expect(JSON.stringify(restored)).toBe(JSON.stringify(value))
        const fragment = JSON.parse(toolsFragment([{ name: "t", description: "d", inputSchema: normalized }], "openai-chat")) as Array<{
          function: { parameters: { properties: object } }
        }>
        expect(Object.keys(fragment[0]?.function.parameters.properties ?? {})).toEqual(order)
      })
    )
  })
})
