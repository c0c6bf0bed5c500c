/**
 * JSON Schema patterns on a linear-time engine (decision 0093): what one match costs against JavaScript's RegExp,
 * on ordinary tool-argument patterns, and what the catastrophic pattern costs each way.
 *
 * First table: one `test` per pattern and string, RegExp (the `u` flag, as ajv compiled it before) against re2js
 * as the codec runs it (the translated pattern, `compileLinear`), and — when present — the native `re2` addon
 * (node-gyp; not a dependency: set `BENCH_RE2=/path/to/node_modules/re2` to include it).
 *
 * Second table: the argument check as a tool sees it — ajv with RegExp against ajv with the linear-time engine,
 * one object with two patterned strings.
 *
 * Third table: `^(a+)+$` against n × `a` and `!`, one call each (RegExp only up to where it still ends).
 */
import { createRequire } from "node:module"
import { Ajv2020 } from "ajv/dist/2020.js"
import { compileLinear, linearOnlyEngine } from "#internal/schema/regex/engine"
import { formatNs, markdownTable, printHeader } from "./support/report.ts"
import { type Compared, compareOps } from "./support/timing.ts"

const ROUNDS = Number(process.env["BENCH_PATTERN_ROUNDS"] ?? 7)
const CPU_NS = 30e6

interface Re2Like {
  test(input: string): boolean
}
type Re2Constructor = new (source: string, flags: string) => Re2Like

const loadNativeRe2 = (): Re2Constructor | undefined => {
  const at = process.env["BENCH_RE2"]
  if (at === undefined || at === "") return undefined
  try {
    return createRequire(import.meta.url)(at) as Re2Constructor
  } catch (thrown) {
    console.error(`BENCH_RE2=${at}: ${thrown instanceof Error ? thrown.message : String(thrown)}; the native column is left out`)
    return undefined
  }
}
const NativeRe2 = loadNativeRe2()

const CASES: ReadonlyArray<{ readonly name: string; readonly pattern: string; readonly input: string }> = [
  { name: "identifier", pattern: "^[a-z][a-z0-9_-]{2,31}$", input: "user_name-42" },
  { name: "ISO date", pattern: "^\\d{4}-\\d{2}-\\d{2}$", input: "2026-05-14" },
  { name: "UUID", pattern: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$", input: "3f2b8c1e-9a4d-4e7b-8c2f-1d0e5a6b7c8d" },
  { name: "email-like", pattern: "^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$", input: "ana.lopez@example.org" },
  { name: "unanchored word", pattern: "urgent|asap", input: "please handle this asap, thanks" },
  { name: "letters (\\p{L})", pattern: "^\\p{L}+(?: \\p{L}+)*$", input: "Zoë Saldaña Ōkubo" },
  { name: "1 KiB text, .{0,1000}", pattern: "^.{0,1000}$", input: "lorem ipsum ".repeat(83) }
]

printHeader("JSON Schema patterns: RegExp against the linear-time engine")

const rows: Array<Array<string>> = []
for (const { name, pattern, input } of CASES) {
  const native = new RegExp(pattern, "u")
  const linear = compileLinear(pattern)
  if (!linear.ok) throw new Error(`${name}: ${linear.reason}`)
  const matcher = linear.matcher
  const addon = NativeRe2 === undefined ? undefined : new NativeRe2(pattern, "u")
  if (matcher.test(input) !== native.test(input) || (addon !== undefined && addon.test(input) !== native.test(input))) throw new Error(`${name}: the engines disagree`)
  const ops = [() => native.test(input), () => matcher.test(input), ...(addon === undefined ? [] : [() => addon.test(input)])]
  const [base, re2js, re2] = (await compareOps(ops, ROUNDS, CPU_NS)) as [Compared, Compared, Compared | undefined]
  rows.push([
    name,
    String(input.length),
    formatNs(base.p50),
    formatNs(re2js.p50),
    `${re2js.ratio.toFixed(1)}×`,
    ...(re2 === undefined ? [] : [formatNs(re2.p50), `${re2.ratio.toFixed(1)}×`])
  ])
}
console.log(
  markdownTable(["pattern", "chars", "RegExp p50", "re2js p50", "re2js ÷ RegExp", ...(NativeRe2 === undefined ? [] : ["re2 (addon) p50", "re2 ÷ RegExp"])], rows) +
    `\n\nOne \`test\` per call; p50, and the median over ${ROUNDS} interleaved rounds of each round's ratio.`
)

// The argument check as a tool runs it: ajv's generated validator around the same engines.
const schema = {
  type: "object",
  properties: { id: { type: "string", pattern: CASES[2]!.pattern }, day: { type: "string", pattern: CASES[1]!.pattern } },
  required: ["id", "day"],
  additionalProperties: false
}
const value = { id: CASES[2]!.input, day: CASES[1]!.input }
const withRegExp = new Ajv2020({ strict: false, allErrors: true }).compile(schema)
const withLinear = new Ajv2020({ strict: false, allErrors: true, code: { regExp: linearOnlyEngine } }).compile(schema)
if (withRegExp(value) !== true || withLinear(value) !== true) throw new Error("the checks disagree")
const [ajvBase, ajvLinear] = (await compareOps([() => withRegExp(value), () => withLinear(value)], ROUNDS, CPU_NS)) as [Compared, Compared]
console.log(
  "\n" +
    markdownTable(
      ["argument check (two patterned strings)", "p50", "÷ RegExp"],
      [
        ["ajv, RegExp", formatNs(ajvBase.p50), "1.0×"],
        ["ajv, linear-time engine", formatNs(ajvLinear.p50), `${ajvLinear.ratio.toFixed(1)}×`]
      ]
    )
)

// The pattern: one call per engine and length; RegExp doubles per `a`, so it stops early.
const catastrophic = "^(a+)+$"
const nativeCatastrophic = new RegExp(catastrophic, "u")
const linearCatastrophic = compileLinear(catastrophic)
if (!linearCatastrophic.ok) throw new Error(linearCatastrophic.reason)
const addonCatastrophic = NativeRe2 === undefined ? undefined : new NativeRe2(catastrophic, "u")
const once = (test: (input: string) => boolean, input: string): number => {
  const started = process.hrtime.bigint()
  test(input)
  return Number(process.hrtime.bigint() - started)
}
const REGEXP_MAX = Number(process.env["BENCH_PATTERN_REGEXP_MAX"] ?? 24)
const catastrophicRows: Array<Array<string>> = []
for (const n of [20, 22, 24, 27, 1024, 1 << 20]) {
  const input = `${"a".repeat(n)}!`
  catastrophicRows.push([
    n >= 1024 ? `${n / 1024} Ki` : String(n),
    n <= REGEXP_MAX ? formatNs(once((s) => nativeCatastrophic.test(s), input)) : "(not run)",
    formatNs(once((s) => linearCatastrophic.matcher.test(s), input)),
    ...(addonCatastrophic === undefined ? [] : [formatNs(once((s) => addonCatastrophic.test(s), input))])
  ])
}
console.log(
  "\n" +
    markdownTable(["`^(a+)+$` on n × a + !", "RegExp", "re2js", ...(addonCatastrophic === undefined ? [] : ["re2 (addon)"])], catastrophicRows) +
    `\n\nOne call each. RegExp doubles with every \`a\` (the issue measured 4–7 s at 27 on its machine); it is run up to n = ${REGEXP_MAX} (\`BENCH_PATTERN_REGEXP_MAX\`).`
)
