import type { ConfigIssue } from "./errors.ts"

/**
 * A small reader over an undecoded YAML value that collects every problem with its dotted path instead of
 * stopping at the first. Types are never coerced: `"false"` is not a boolean and a string is not a list.
 */
export class ConfigReader {
  readonly issues: Array<ConfigIssue> = []

  problem(path: string, message: string): undefined {
    this.issues.push({ path, message })
    return undefined
  }

  /** A mapping with only `known` keys (others are reported); undefined when absent or not a mapping. */
  record(value: unknown, path: string, known?: ReadonlyArray<string>): Readonly<Record<string, unknown>> | undefined {
    if (value === undefined || value === null) return undefined
    if (typeof value !== "object" || Array.isArray(value)) return this.problem(path, `must be a mapping, got ${describe(value)}`)
    const record = value as Record<string, unknown>
    if (known !== undefined) {
      for (const key of Object.keys(record)) {
        if (!known.includes(key)) this.problem(join(path, key), `unknown key; expected one of: ${known.join(", ")}`)
      }
    }
    return record
  }

  boolean(value: unknown, path: string): boolean | undefined {
    if (value === undefined || value === null) return undefined
    if (typeof value === "boolean") return value
    return this.problem(path, `must be true or false, got ${describe(value)}${typeof value === "string" ? " (quoted text is not a boolean)" : ""}`)
  }

  string(value: unknown, path: string): string | undefined {
    if (value === undefined || value === null) return undefined
    if (typeof value === "string" && value.trim() !== "") return value.trim()
    return this.problem(path, typeof value === "string" ? "must not be empty" : `must be a string, got ${describe(value)}`)
  }

  /** A list of non-empty strings. A lone string is refused, never read as a one-item list or as "allow all". */
  stringList(value: unknown, path: string): ReadonlyArray<string> | undefined {
    if (value === undefined || value === null) return undefined
    if (typeof value === "string") return this.problem(path, `must be a list of strings, got the string ${JSON.stringify(value)}; write [${JSON.stringify(value)}]`)
    if (!Array.isArray(value)) return this.problem(path, `must be a list of strings, got ${describe(value)}`)
    const out: Array<string> = []
    value.forEach((item, i) => {
      const s = this.string(item, `${path}[${i}]`)
      if (s !== undefined) out.push(s)
    })
    return out
  }

  /** A positive number (seconds, sizes); `integer` refuses fractions, `max` bounds it. */
  positive(value: unknown, path: string, integer = false, max = Number.MAX_SAFE_INTEGER): number | undefined {
    if (value === undefined || value === null) return undefined
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || (integer && !Number.isSafeInteger(value))) {
      return this.problem(path, `must be a positive ${integer ? "integer" : "number"}, got ${describe(value)}`)
    }
    if (value > max) return this.problem(path, `must be at most ${max}, got ${value}`)
    return value
  }

  /** A non-negative number (prices). */
  nonNegative(value: unknown, path: string): number | undefined {
    if (value === undefined || value === null) return undefined
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) return this.problem(path, `must be a number ≥ 0, got ${describe(value)}`)
    return value
  }

  list(value: unknown, path: string): ReadonlyArray<unknown> | undefined {
    if (value === undefined || value === null) return undefined
    if (!Array.isArray(value)) return this.problem(path, `must be a list, got ${describe(value)}`)
    return value
  }

  oneOf<T extends string>(value: unknown, path: string, options: ReadonlyArray<T>): T | undefined {
    if (value === undefined || value === null) return undefined
    if (typeof value === "string" && (options as ReadonlyArray<string>).includes(value)) return value as T
    return this.problem(path, `must be one of ${options.map((o) => JSON.stringify(o)).join(", ")}, got ${describe(value)}`)
  }
}

/** Keys that make a dotted path ambiguous are bracketed. */
export const join = (path: string, key: string): string =>
  /^[A-Za-z0-9_-]+$/.test(key) ? (path === "" ? key : `${path}.${key}`) : `${path}[${JSON.stringify(key.slice(0, 80))}]`

const describe = (value: unknown): string => {
  if (Array.isArray(value)) return "a list"
  if (value === null) return "null"
  if (typeof value === "string") return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`
  if (typeof value === "object") return "a mapping"
  return `${typeof value} ${String(value)}`
}
