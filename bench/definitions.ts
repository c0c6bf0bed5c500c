/**
 * Provider tool arrays: the JSON text of a request's `tools` value for 10 to 10,000 tools in each of the four
 * dialects. First build against a plain sort + map + `JSON.stringify`; repeat build (same array) should cost the
 * same at every size.
 */
import { isDeepStrictEqual } from "node:util"
import type { ToolSpec } from "#internal/llm/request"
import type { JsonSchema } from "#internal/schema/json-schema"
import { type ToolDialect, toolsFragment } from "#internal/schema/provider-tools"
import { ToolMeta } from "#internal/tool/tool-meta"
import { formatNs, markdownTable, printHeader } from "./support/report.ts"
import { compareOps } from "./support/timing.ts"

const SIZES = [10, 100, 1_000, 10_000] as const
const DIALECTS: ReadonlyArray<ToolDialect> = ["openai-chat", "openai-responses", "anthropic", "gemini"]

const deepFreeze = <A>(value: A): A => {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v)
    Object.freeze(value)
  }
  return value
}

/** A typical search-style tool: four properties, one required, bounds, an enum, an array. */
const schemaFor = (i: number): JsonSchema => ({
  type: "object",
  properties: {
    query: { type: "string", description: `What to look for in collection ${i}` },
    limit: { type: "integer", minimum: 1, maximum: 100 },
    mode: { type: "string", enum: ["fast", "full"] },
    tags: { type: "array", items: { type: "string" } }
  },
  required: ["query"],
  additionalProperties: false
})

/**
 * Fresh, frozen specs shaped like the registry's, in a scrambled order (a multiplicative permutation), so both
 * sides really sort. Names mix plain and dotted forms, as tool sets from plugins do.
 */
const makeTools = (n: number): Array<ToolSpec> =>
  Array.from({ length: n }, (_, k) => {
    const i = (k * 7919) % n
    const name = i % 3 === 0 ? `search.collection_${String(i).padStart(5, "0")}` : `tool_${String(i).padStart(5, "0")}`
    return deepFreeze({ name, description: `Searches collection ${i} and returns matching records`, inputSchema: schemaFor(i) })
  })

/**
 * The same tools as registration stores them: through `ToolMeta`, whose schema copy is canonically ordered (a
 * cost paid once, at registration, not at every emission). Still new objects every time, so nothing is cached.
 */
const makeRegisteredTools = (n: number): Array<ToolSpec> =>
  makeTools(n).map((spec) => {
    const meta = ToolMeta.make(spec.name).description(spec.description).inputSchema(spec.inputSchema)
    return Object.freeze({ name: meta.name, description: meta.descriptionText, inputSchema: meta.schema })
  })

const compareNames = (a: ToolSpec, b: ToolSpec): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
const wire = (name: string): string => name.replaceAll(".", "_")

/** What a careful caller writes without a library: sort, map to the provider's shape, stringify once. */
const baseline = (tools: ReadonlyArray<ToolSpec>, dialect: ToolDialect): string => {
  const sorted = [...tools].sort(compareNames)
  switch (dialect) {
    case "openai-chat":
      return JSON.stringify(
        sorted.map((t) => ({ type: "function", function: { name: wire(t.name), description: t.description, parameters: t.inputSchema } }))
      )
    case "openai-responses":
      return JSON.stringify(
        sorted.map((t) => ({ type: "function", name: wire(t.name), description: t.description, parameters: t.inputSchema }))
      )
    case "anthropic":
      return JSON.stringify(sorted.map((t) => ({ name: wire(t.name), description: t.description, input_schema: t.inputSchema })))
    case "gemini":
      return JSON.stringify([
        { functionDeclarations: sorted.map((t) => ({ name: t.name, description: t.description, parametersJsonSchema: t.inputSchema })) }
      ])
  }
}

/** Same tools, same JSON values (key order aside) — except OpenAI, where ours adds the strict-mode rewrite. */
const verify = (dialect: ToolDialect): void => {
  const tools = makeTools(50)
  const ours: unknown = JSON.parse(toolsFragment(tools, dialect))
  const plain: unknown = JSON.parse(baseline(tools, dialect))
  const same = dialect.startsWith("openai")
    ? Array.isArray(ours) && Array.isArray(plain) && ours.length === plain.length
    : isDeepStrictEqual(ours, plain)
  if (!same) throw new Error(`${dialect}: toolsFragment and the baseline describe different tools`)
}

const main = async (): Promise<void> => {
  printHeader("Provider tool definitions: `toolsFragment(tools, dialect)`")
  for (const dialect of DIALECTS) verify(dialect)
  const rows: Array<ReadonlyArray<string>> = []
  for (const size of SIZES) {
    const known = makeTools(size)
    for (const dialect of DIALECTS) {
      const same = [...known]
      toolsFragment(same, dialect)
      const [base, cold, registered, warm, repeat] = await compareOps(
        [
          { setup: () => makeTools(size), run: (tools: ReadonlyArray<ToolSpec>) => baseline(tools, dialect) },
          { setup: () => makeTools(size), run: (tools: ReadonlyArray<ToolSpec>) => toolsFragment(tools, dialect) },
          { setup: () => makeRegisteredTools(size), run: (tools: ReadonlyArray<ToolSpec>) => toolsFragment(tools, dialect) },
          { setup: () => [...known], run: (tools: ReadonlyArray<ToolSpec>) => toolsFragment(tools, dialect) },
          () => toolsFragment(same, dialect)
        ],
        size >= 10_000 ? 3 : 5,
        size >= 1_000 ? 150e6 : 60e6,
        size >= 10_000 ? 4 : undefined
      )
      if (base === undefined || cold === undefined || registered === undefined || warm === undefined || repeat === undefined) {
        throw new Error("missing timing")
      }
      rows.push([
        String(size),
        dialect,
        formatNs(base.p50),
        `${formatNs(cold.p50)} (${cold.ratio.toFixed(2)}×)`,
        `${formatNs(registered.p50)} (${registered.ratio.toFixed(2)}×)`,
        `${formatNs(warm.p50)} (${warm.ratio.toFixed(2)}×)`,
        formatNs(repeat.p50)
      ])
    }
  }
  console.log(
    markdownTable(
      [
        "tools",
        "dialect",
        "baseline: sort + map + stringify",
        "first build, new specs (× baseline)",
        "first build, registered specs (× baseline)",
        "first build, known specs (× baseline)",
        "repeat build (same array)"
      ],
      rows
    )
  )
  console.log(
    "\nThe baseline gets new spec objects every iteration, like the *new specs* column, so both pay the same GC. " +
      "*New specs*: every spec and schema object is new, nothing is cached, schemas in the author's key order (a " +
      "cold start from hand-made specs). *Registered specs*: new objects too, but shaped as registration stores them " +
      "(schema keys already in canonical order, done once by `ToolMeta.inputSchema`) — the first build a Worker " +
      "actually performs. *Known specs*: a new " +
      "array around specs already serialised once (a tool set that changed by one tool); schema text is cached " +
      "per schema object. *Repeat*: the same array instance, answered from the per-array cache. p50 times; " +
      "ratios are medians of per-round p50 ratios. The OpenAI baselines omit the strict-mode rewrite ours performs."
  )
}

await main()
