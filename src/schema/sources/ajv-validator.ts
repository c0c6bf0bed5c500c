import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import type { ErrorObject, ValidateFunction } from "ajv/dist/2020.js"
import { canonicalSchemaJson } from "../canonical-json.ts"
import { UnsupportedSchemaError } from "../normalize.ts"
import type { ArgumentIssue } from "../argument-codec.ts"
import type { JsonSchema } from "../json-schema.ts"

/**
 * One shared compiler. `strictNumbers` refuses NaN and ±Infinity for `number`/`integer`, which is what the
 * normalised schema promises. Standard formats (date-time, email, uri, uuid…) are checked, so a `format` the
 * model is shown is a `format` the decoder enforces; unknown formats and keywords (annotations, vendor `x-`
 * keys) are ignored rather than fatal. `multipleOfPrecision` makes `multipleOf: 0.1` accept 0.3 (whose float quotient is
 * 2.9999999999999996), as Effect and zod do; without it the model is refused for following the schema.
 */
const ajv = new Ajv2020({
  allErrors: true,
  verbose: true,
  strict: false,
  strictNumbers: true,
  multipleOfPrecision: 9,
  validateFormats: true,
  logger: false
})
// ajv-formats is CommonJS; its module object also carries the plugin as `.default`, which is what NodeNext types.
addFormatsModule.default(ajv)

/** Checks a value against a compiled schema; `undefined` means valid, so the success path allocates nothing. */
export type JsonSchemaCheck = (input: unknown) => ReadonlyArray<ArgumentIssue> | undefined

/**
 * Identical schemas (by canonical text) share one compiled validator. A compiled validator is several KiB of
 * generated code, the bulk of a defined tool's memory; many tools share argument shapes.
 */
const compiled = new Map<string, ValidateFunction>()

const validatorFor = (schema: JsonSchema): ValidateFunction => {
  const key = canonicalSchemaJson(schema)
  let validate = compiled.get(key)
  if (validate === undefined) {
    validate = ajv.compile(schema)
    compiled.set(key, validate)
  }
  return validate
}

/**
 * Checks the schema now (an invalid schema fails at definition time) but compiles it on first use: defining
 * ten thousand tools should not cost ten thousand compilations when most are never called. Call the result per
 * decode.
 */
export const compileJsonSchema = (schema: JsonSchema): JsonSchemaCheck => {
  if (ajv.validateSchema(schema) !== true) {
    throw new UnsupportedSchemaError({ message: `not a valid JSON Schema: ${ajv.errorsText(ajv.errors)}` })
  }
  let validate: ValidateFunction | undefined
  return (input) => {
    validate ??= validatorFor(schema)
    return validate(input) ? undefined : toIssues(validate.errors ?? [])
  }
}

const pathOf = (pointer: string): Array<string | number> =>
  pointer === ""
    ? []
    : pointer
        .slice(1)
        .split("/")
        .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"))
        .map((s) => (/^(0|[1-9]\d*)$/.test(s) ? Number(s) : s))

/** A value as the model should see it quoted back: short, and only as much as helps. */
export const renderValue = (v: unknown): string => {
  if (v === null) return "null"
  if (Array.isArray(v)) return "array"
  if (typeof v === "object") return "object"
  if (typeof v === "string") return JSON.stringify(v.length > 32 ? `${v.slice(0, 29)}...` : v)
  return String(v)
}

const typeNameOf = (schema: unknown): string => {
  const t = typeof schema === "object" && schema !== null ? (schema as { type?: unknown }).type : undefined
  return typeof t === "string" ? t : "number"
}

const describeAlternatives = (branches: unknown): string => {
  if (!Array.isArray(branches)) return "one of the allowed shapes"
  const names = branches.map((b) => {
    if (typeof b !== "object" || b === null) return "any value"
    const o = b as { type?: unknown; const?: unknown; enum?: unknown }
    if ("const" in o) return JSON.stringify(o.const)
    if (Array.isArray(o.enum)) return o.enum.map((e) => JSON.stringify(e)).join(" or ")
    if (typeof o.type === "string") return o.type
    if (Array.isArray(o.type)) return o.type.join(" or ")
    return "a matching value"
  })
  return [...new Set(names)].join(" or ")
}

const messageOf = (e: ErrorObject): string => {
  const p = e.params as Record<string, unknown>
  const got = renderValue(e.data)
  switch (e.keyword) {
    case "type":
      return `expected ${String(p["type"]).split(",").join(" or ")}, got ${got}`
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return `expected ${typeNameOf(e.parentSchema)} ${String(p["comparison"])} ${String(p["limit"])}, got ${got}`
    case "multipleOf":
      return `expected a multiple of ${String(p["multipleOf"])}, got ${got}`
    case "required":
      return "required"
    case "additionalProperties":
    case "unevaluatedProperties":
      return "not allowed"
    case "enum":
      return `expected one of ${(p["allowedValues"] as ReadonlyArray<unknown>).map((v) => JSON.stringify(v)).join(", ")}, got ${got}`
    case "const":
      return `expected ${JSON.stringify(p["allowedValue"])}, got ${got}`
    case "minLength":
      return `expected at least ${String(p["limit"])} characters, got ${String((e.data as string).length)}`
    case "maxLength":
      return `expected at most ${String(p["limit"])} characters, got ${String((e.data as string).length)}`
    case "minItems":
      return `expected at least ${String(p["limit"])} items, got ${String((e.data as ReadonlyArray<unknown>).length)}`
    case "maxItems":
      return `expected at most ${String(p["limit"])} items, got ${String((e.data as ReadonlyArray<unknown>).length)}`
    case "pattern":
      return `expected a string matching ${String(p["pattern"])}, got ${got}`
    case "anyOf":
    case "oneOf":
      return `expected ${describeAlternatives(e.schema)}, got ${got}`
    default:
      return e.message ?? `failed ${e.keyword}`
  }
}

/**
 * Turns ajv's errors into one issue per problem. Errors raised inside the branches of a failed `anyOf`/`oneOf`
 * are dropped: the alternative-level issue says what was expected, the branch noise would only confuse.
 */
const toIssues = (errors: ReadonlyArray<ErrorObject>): ReadonlyArray<ArgumentIssue> => {
  const branchRoots = errors
    .filter((e) => e.keyword === "anyOf" || e.keyword === "oneOf")
    .map((e) => `${e.schemaPath}/`)
  const issues: Array<ArgumentIssue> = []
  for (const e of errors) {
    if (branchRoots.some((root) => e.schemaPath.startsWith(root))) continue
    const path = pathOf(e.instancePath)
    const p = e.params as Record<string, unknown>
    if (e.keyword === "required") path.push(String(p["missingProperty"]))
    if (e.keyword === "additionalProperties") path.push(String(p["additionalProperty"]))
    if (e.keyword === "unevaluatedProperties") path.push(String(p["unevaluatedProperty"]))
    issues.push({ path, message: messageOf(e) })
  }
  return issues
}
