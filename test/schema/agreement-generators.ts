import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import fc from "fast-check"
import type { JsonValue } from "../../src/schema/json-schema.ts"

/*
 * Generators for the agreement properties. Values are generated from the advertised JSON Schema keyword by
 * keyword and then confirmed by an independent oracle (a fresh ajv, standard 2020-12 semantics), so the
 * generator may be loose where keywords intersect (allOf, pattern with lengths) without weakening the test.
 */

export type S = { readonly [k: string]: JsonValue }
export const isRecord = (v: JsonValue | undefined): v is S => typeof v === "object" && v !== null && !Array.isArray(v)
export const asSchema = (v: JsonValue | undefined): S => (isRecord(v) ? v : {})
const typesOf = (s: S): ReadonlyArray<string> =>
  Array.isArray(s["type"]) ? (s["type"] as ReadonlyArray<string>) : typeof s["type"] === "string" ? [s["type"]] : []
const num = (v: JsonValue | undefined): number | undefined => (typeof v === "number" ? v : undefined)

const oracleAjv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true, multipleOfPrecision: 9, logger: false })
addFormatsModule.default(oracleAjv)
/** Whether `value` is valid under `schema` by the JSON Schema standard (independent of the codec under test). */
export const oracle = (schema: S): ((value: unknown) => boolean) => {
  const validate = oracleAjv.compile(schema)
  return (value) => validate(value) === true
}

/**
 * Characters the property strings are made of. A schema with `maxLength` or a pattern gets characters of the
 * Basic Multilingual Plane only: there JSON Schema (code points) and the libraries (UTF-16 units) count alike,
 * which is the documented residual (decision 0002). Elsewhere astral characters are included.
 */
const bmpChar = fc.integer({ min: 0x20, max: 0xd7ff }).map((c) => String.fromCharCode(c))
const anyChar = fc.oneof(bmpChar, fc.constantFrom("😀", "𝄞", "a", " "))

/** Define (never assign) own properties, so a generated `__proto__` key is data, not a prototype change. */
export const objectOf = (entries: ReadonlyArray<readonly [string, JsonValue]>): S => Object.fromEntries(entries) as S

const stringArb = (s: S): fc.Arbitrary<JsonValue> => {
  const minLength = num(s["minLength"]) ?? 0
  const maxLength = num(s["maxLength"])
  const pattern = typeof s["pattern"] === "string" ? s["pattern"] : undefined
  if (pattern !== undefined) return fc.stringMatching(new RegExp(pattern, "u"))
  const unit = maxLength === undefined ? anyChar : bmpChar
  return fc.string({ unit, minLength, maxLength: maxLength ?? minLength + 8 })
}

const decimals = (n: number): number => {
  const text = String(n)
  return text.includes("e-") ? Number(text.split("e-")[1]) : (text.split(".")[1] ?? "").length
}

const numberArb = (s: S, integer: boolean): fc.Arbitrary<JsonValue> => {
  const lo = Math.max(num(s["minimum"]) ?? -1e6, num(s["exclusiveMinimum"]) ?? -1e6)
  const hi = Math.min(num(s["maximum"]) ?? 1e6, num(s["exclusiveMaximum"]) ?? 1e6)
  const step = num(s["multipleOf"])
  if (step !== undefined) {
    // A multiple is written as a model writes it: the decimal value, not the float product k * step.
    const k = fc.integer({ min: Math.ceil(lo / step), max: Math.floor(hi / step) })
    return k.map((i) => Number((i * step).toFixed(decimals(step))) + 0)
  }
  if (integer) return fc.integer({ min: Math.ceil(lo), max: Math.floor(hi) })
  const edges = [lo, hi, 0, lo + 1, hi - 1].filter((x) => x >= lo && x <= hi)
  return fc.oneof(fc.double({ min: lo, max: hi, noNaN: true, noDefaultInfinity: true }).map((x) => x + 0), fc.constantFrom(...edges))
}

const arrayArb = (s: S): fc.Arbitrary<JsonValue> => {
  const prefix = Array.isArray(s["prefixItems"]) ? (s["prefixItems"] as ReadonlyArray<JsonValue>).map(asSchema) : []
  const items = s["items"]
  const minItems = num(s["minItems"]) ?? 0
  const maxItems = num(s["maxItems"]) ?? Math.max(minItems, prefix.length) + 3
  if (prefix.length > 0) {
    const rest = items === false || items === undefined ? undefined : arbitraryOf(asSchema(items))
    const head = fc.tuple(...prefix.map(arbitraryOf))
    const cut = fc.integer({ min: Math.min(minItems, prefix.length), max: Math.min(maxItems, prefix.length) })
    const tail = rest === undefined ? fc.constant([]) : fc.array(rest, { maxLength: Math.max(0, Math.min(3, maxItems - prefix.length)) })
    return fc.tuple(head, cut, tail).map(([h, n, t]) => (n < prefix.length ? h.slice(0, n) : [...h, ...t]))
  }
  return fc.array(arbitraryOf(asSchema(items)), { minLength: minItems, maxLength: Math.min(maxItems, minItems + 4) })
}

const objectArb = (s: S): fc.Arbitrary<JsonValue> => {
  const props = asSchema(s["properties"])
  const required = new Set((s["required"] ?? []) as ReadonlyArray<string>)
  const extra = s["additionalProperties"]
  const names = asSchema(s["propertyNames"])
  const fields = Object.entries(props).map(([k, v]) => {
    const value = arbitraryOf(asSchema(v))
    return required.has(k) ? value.map((x) => [[k, x] as const]) : fc.option(value.map((x) => [[k, x] as const]), { nil: undefined })
  })
  const declared = fc.tuple(...fields).map((parts) => parts.flatMap((p) => p ?? []))
  if (!isRecord(extra) || Object.keys(props).length > 0) return declared.map(objectOf)
  // A record: keys from `propertyNames` (an enum, or any string including `__proto__`), every required key present.
  const keyArb: fc.Arbitrary<string> = Array.isArray(names["enum"])
    ? fc.constantFrom(...(names["enum"] as ReadonlyArray<string>))
    : fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("__proto__", "constructor", "toString"))
  const value = arbitraryOf(extra)
  const requiredEntries = fc.tuple(...[...required].map((k) => value.map((x) => [k, x] as const)))
  return fc
    .tuple(requiredEntries, fc.array(fc.tuple(keyArb, value), { maxLength: 4 }))
    .map(([req, more]) => objectOf([...more, ...req]))
}

/** An arbitrary of values valid for the JSON Schema the codec emits (confirmed by the oracle in the tests). */
export const arbitraryOf = (s: S): fc.Arbitrary<JsonValue> => {
  if ("const" in s) return fc.constant(s["const"] as JsonValue)
  if (Array.isArray(s["enum"])) return fc.constantFrom(...(s["enum"] as ReadonlyArray<JsonValue>))
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = s[key]
    if (Array.isArray(branches)) {
      const { [key]: _alternatives, ...rest } = s
      return fc.oneof(...branches.map((b) => arbitraryOf({ ...rest, ...asSchema(b) })))
    }
  }
  if (Array.isArray(s["allOf"])) {
    const { allOf: _parts, ...base } = s
    return arbitraryOf(base)
  }
  const types = typesOf(s)
  if (types.length > 1) return fc.oneof(...types.map((t) => arbitraryOf({ ...s, type: t })))
  switch (types[0]) {
    case "null":
      return fc.constant(null)
    case "boolean":
      return fc.boolean()
    case "string":
      return stringArb(s)
    case "integer":
      return numberArb(s, true)
    case "number":
      return numberArb(s, false)
    case "array":
      return arrayArb(s)
    case "object":
      return objectArb(s)
    default:
      throw new Error(`generator does not cover ${JSON.stringify(s)}`)
  }
}

/** Every subschema a value at this position may be checked against (branches of anyOf/oneOf flattened). */
const branchesOf = (s: S): ReadonlyArray<S> => {
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = s[key]
    if (Array.isArray(branches)) {
      const { [key]: _alternatives, ...rest } = s
      return branches.flatMap((b) => branchesOf({ ...rest, ...asSchema(b) }))
    }
  }
  return [s]
}

/** Values near `v` that break one keyword of `s` (the oracle later keeps only those truly invalid). */
const localCorruptions = (s: S, v: JsonValue): ReadonlyArray<JsonValue> => {
  const out: Array<JsonValue> = [true, "17", 17.5, 17, [], {}, null, "__not_in_enum__"]
  if (typeof v === "number") {
    out.push(v + 0.5, v + 1, v - 1, -v - 1)
    for (const key of ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]) {
      const b = num(s[key])
      if (b !== undefined) out.push(b, b - 1, b + 1, b - 0.5, b + 0.5)
    }
    const step = num(s["multipleOf"])
    if (step !== undefined) out.push(v + step / 2)
  }
  if (typeof v === "string") {
    const min = num(s["minLength"])
    const max = num(s["maxLength"])
    if (min !== undefined && min > 0) out.push(v.slice(0, min - 1), "x".repeat(min - 1))
    if (max !== undefined) out.push(v + "x".repeat(max + 1 - v.length), "x".repeat(max + 1))
    out.push("", "\u0000", `${v}\u0000`, `\u0000${v}`, v.slice(1), v.slice(0, -1), v.toUpperCase(), ` ${v}`, `${v} `)
  }
  if (Array.isArray(v)) {
    const max = num(s["maxItems"])
    if (v.length > 0) out.push(v.slice(0, -1), [...v, v[0] as JsonValue])
    if (max !== undefined && v.length > 0) out.push([...v, ...Array.from({ length: max + 1 - v.length }, () => v[0] as JsonValue)])
    const prefix = Array.isArray(s["prefixItems"]) ? (s["prefixItems"] as ReadonlyArray<JsonValue>).map(asSchema) : []
    v.forEach((item, i) => {
      const itemSchema = i < prefix.length ? (prefix[i] as S) : asSchema(s["items"])
      for (const bad of corruptionsOf(itemSchema, item)) out.push(v.map((x, j) => (j === i ? bad : x)))
    })
  } else if (isRecord(v)) {
    const props = asSchema(s["properties"])
    out.push({ ...v, __extra__: 1 }, objectOf([...Object.entries(v), ["__proto__", 1]]))
    for (const key of Object.keys(v)) {
      const { [key]: _dropped, ...rest } = v
      out.push(rest)
    }
    for (const [key, sub] of Object.entries(props)) {
      if (!(key in v)) {
        out.push({ ...v, [key]: null })
        continue
      }
      for (const bad of corruptionsOf(asSchema(sub), v[key] as JsonValue)) out.push({ ...v, [key]: bad })
    }
    const extra = s["additionalProperties"]
    if (isRecord(extra)) {
      for (const [key, value] of Object.entries(v)) {
        if (key in props) continue
        for (const bad of corruptionsOf(extra, value)) out.push(objectOf([...Object.entries(v).filter(([k]) => k !== key), [key, bad]]))
      }
    }
  }
  return out
}

/** Single-point corruptions of `v` under every branch it could belong to. */
export const corruptionsOf = (s: S, v: JsonValue): ReadonlyArray<JsonValue> => branchesOf(s).flatMap((b) => localCorruptions(b, v))
