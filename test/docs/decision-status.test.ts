import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

// Every decision record says under its title whether it still holds (accepted) or which later records amend or
// supersede it, and the index's status column says the same (docs/decisions/README.md, CONTRIBUTING.md).
const dir = fileURLToPath(new URL("../../docs/decisions", import.meta.url))
const records = readdirSync(dir).filter((name) => /^\d{4}-.*\.md$/.test(name)).sort()
const numbers = new Set(records.map((name) => name.slice(0, 4)))
const index = readFileSync(join(dir, "README.md"), "utf8")

/** `accepted`, or `amended by …` / `superseded by …` with the numbers it names, from a record's status line. */
const statusOf = (text: string): { readonly kind: string; readonly refs: ReadonlyArray<string> } | undefined => {
  const match = /^Status: (accepted\.|(amended|superseded) by ((?:\[\d{4}\]\(\d{4}-[^)]+\.md\)(?:,\s+|\s+and\s+)?)+):)/.exec(text)
  if (match === null) return undefined
  if (match[1] === "accepted.") return { kind: "accepted", refs: [] }
  return { kind: match[2] as string, refs: [...(match[3] as string).matchAll(/\[(\d{4})\]/g)].map((m) => m[1] as string) }
}

describe("docs: decision records carry their status", () => {
  it.each(records.map((name) => [name] as const))("%s", (name) => {
    const lines = readFileSync(join(dir, name), "utf8").split("\n")
    expect(lines[0]).toMatch(new RegExp(`^# ${name.slice(0, 4)} — `))
    expect(lines[1]).toBe("")
    const status = statusOf(lines.slice(2).join("\n"))
    expect(status, "a status line right under the title").toBeDefined()
    for (const ref of status?.refs ?? []) {
      expect(numbers.has(ref)).toBe(true)
      expect(ref > name.slice(0, 4), `${ref} is a later record`).toBe(true)
    }
    const row = index.split("\n").find((line) => line.startsWith(`| [${name.slice(0, 4)}](${name}) |`))
    expect(row, "a row in the index").toBeDefined()
    const column = (row ?? "").split(" | ").at(-1)?.replace(/ \|$/, "") ?? ""
    const expected =
      status?.kind === "accepted" ? "accepted" : `${status?.kind} by ${(status?.refs ?? []).map((ref) => `[${ref}](`).join("")}`
    // The column names the same kind and the same records, in the same order.
    if (status?.kind === "accepted") expect(column).toBe(expected)
    else {
      expect(column.startsWith(`${status?.kind} by `)).toBe(true)
      expect([...column.matchAll(/\[(\d{4})\]/g)].map((m) => m[1])).toEqual(status?.refs)
    }
  })
  it("lists no record that does not exist", () => {
    const listed = [...index.matchAll(/^\| \[(\d{4})\]\(([^)]+)\) \|/gm)].map((m) => m[2] as string)
    expect(listed.sort()).toEqual(records)
  })
})
