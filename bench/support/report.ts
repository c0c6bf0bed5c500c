import path from "node:path"
import { machineLine } from "./machine.ts"

/**
 * The command that reproduces this run, as a reader would type it from the repository root. Compiled benchmarks
 * (dist-bench/, plain Node on the built package) are named by the npm script that builds and runs them.
 */
export const reproduceCommand = (): string => {
  const script = path.relative(process.cwd(), process.argv[1] ?? "").split(path.sep).join("/")
  const args = process.argv.slice(2)
  const compiled = /^dist-bench\/(.+)\.js$/.exec(script)
  if (compiled !== null) {
    const name = compiled[1] === "run-all" ? "" : ` ${compiled[1]}`
    return `npm run bench --${name}${args.length > 0 ? ` ${args.join(" ")}` : ""}`.replace(/ --$/, "")
  }
  const gc = typeof globalThis.gc === "function" ? "--expose-gc " : ""
  return `node ${gc}${script}${args.length > 0 ? ` ${args.join(" ")}` : ""}`
}

/** Heading, command and machine, printed before a benchmark's tables so a pasted result is self-describing. */
export const printHeader = (title: string): void => {
  console.log(`## ${title}\n`)
  console.log(`Command: \`${reproduceCommand()}\`  `)
  console.log(`Machine: ${machineLine()}\n`)
}

export const markdownTable = (headers: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const right = (cell: string): boolean => /^~?[\d.,]+\s?(ns|µs|ms|s|B|KiB|MiB|×)?$/.test(cell)
  const align = headers.map((_, i) => (rows.length > 0 && rows.every((r) => right(r[i] ?? "")) ? "---:" : "---"))
  const line = (cells: ReadonlyArray<string>): string => `| ${cells.join(" | ")} |`
  return [line(headers), line(align), ...rows.map(line)].join("\n")
}

/** Nanoseconds in the unit that keeps three significant digits readable. */
export const formatNs = (ns: number): string => {
  if (ns < 1_000) return `${ns.toFixed(0)} ns`
  if (ns < 1_000_000) return `${(ns / 1_000).toFixed(2)} µs`
  if (ns < 1_000_000_000) return `${(ns / 1_000_000).toFixed(2)} ms`
  return `${(ns / 1_000_000_000).toFixed(2)} s`
}

export const formatRatio = (value: number, baseline: number): string => `${(value / baseline).toFixed(2)}×`

export const formatBytes = (bytes: number): string =>
  bytes < 10_240 ? `${bytes.toFixed(0)} B` : bytes < 10_485_760 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1_048_576).toFixed(1)} MiB`
